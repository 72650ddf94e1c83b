package match

import "testing"

func BenchmarkScanJSONFields(b *testing.B) {
	body := `{"orderId":"ord-049","customer":"acme","qty":1,"sku":"SKU-049"}`
	keys := []string{"sku"}
	var spans [1][2]int
	b.ReportAllocs()
	for b.Loop() {
		if !scanJSONFields(body, keys, true, spans[:]) {
			b.Fatal("unsure")
		}
	}
}
