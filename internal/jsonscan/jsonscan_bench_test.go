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
