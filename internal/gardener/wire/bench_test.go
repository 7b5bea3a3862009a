package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// BenchmarkDecodeShootPageByFormat decodes one page of 500 generated
// shoots as JSON and as protobuf, the same objects in both: what the
// client's share of a page costs from a CRD server and from
// gardener-apiserver. It needs no test bed.
func BenchmarkDecodeShootPageByFormat(b *testing.B) {
	l := landscape.Generate(landscape.Options{Seed: 2000, GlobalAccounts: 350})
	var list gardencorev1beta1.ShootList
	list.ResourceVersion, list.Continue = "123456", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"
	for _, s := range l.Shoots[:500] {
		list.Items = append(list.Items, *s.Object)
	}
	jsonBody, err := json.Marshal(&list)
	if err != nil {
		b.Fatal(err)
	}
	msg, err := list.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	protobufBody := protobufEnvelope(b, rand.New(rand.NewPCG(1, 1)), "ShootList", msg)
	for _, format := range []struct {
		name   string
		body   []byte
		decode func(r io.Reader, p *Page[ShootItem]) error
	}{
		{"json", jsonBody, func(r io.Reader, p *Page[ShootItem]) error { return decodePage(newScanner(r), p) }},
		{"protobuf", protobufBody, decodeProtobufPage[ShootItem]},
	} {
		b.Run(format.name, func(b *testing.B) {
			b.SetBytes(int64(len(format.body)))
			b.ReportAllocs()
			for b.Loop() {
				var p Page[ShootItem]
				if err := format.decode(bytes.NewReader(format.body), &p); err != nil {
					b.Fatal(err)
				}
				if len(p.Items) != 500 {
					b.Fatalf("decoded %d shoots, want 500", len(p.Items))
				}
			}
		})
	}
}
