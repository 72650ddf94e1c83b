package jsonscan

import "testing"

func BenchmarkFields(b *testing.B) {
	body := `{"orderId":"ord-049","customer":"acme","qty":1,"sku":"SKU-049"}`
	keys := []string{"sku"}
	var spans [1][2]int
	b.ReportAllocs()
	for b.Loop() {
		if !Fields(body, keys, true, spans[:]) {
			b.Fatal("unsure")
		}
	}
}

// BenchmarkPath reads bench's handlebars body's $.name (the templates' jsonPath helper).
func BenchmarkPath(b *testing.B) {
	body := `{"name":"Ada","tags":[1,2,3]}`
	keys := []string{"name"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, res := Path(body, keys, false); res != Found {
			b.Fatal(res)
		}
	}
}
