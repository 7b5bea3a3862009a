package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/go-json-experiment/json"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// referenceShoot decodes what ShootItem decodes, with encoding/json/v2: the
// oracle the scanner is held to.
type referenceShoot struct {
	Metadata struct {
		Name              string            `json:"name"`
		ResourceVersion   string            `json:"resourceVersion"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
		Labels            map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		CredentialsBindingName string `json:"credentialsBindingName"`
		SecretBindingName      string `json:"secretBindingName"`
	} `json:"spec"`
}

func (r referenceShoot) item() ShootItem {
	var it ShootItem
	it.Metadata.Name, it.Metadata.ResourceVersion = r.Metadata.Name, r.Metadata.ResourceVersion
	if r.Metadata.DeletionTimestamp != nil {
		it.Metadata.DeletionTimestamp = *r.Metadata.DeletionTimestamp
	}
	it.Metadata.RuntimeID = r.Metadata.Labels["kyma-project.io/runtime-id"]
	it.Spec.CredentialsBindingName, it.Spec.SecretBindingName = r.Spec.CredentialsBindingName, r.Spec.SecretBindingName
	return it
}

// A shoot as the API server serves it: what a decision reads among managed
// fields, status and escapes in strings, names and members it skips.
const servedShoot = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {
    "annotations": {"note": "a \"quoted\" \\ value, \u00e9t\u00e9 \ud83d\ude00", "empty": ""},
    "creationTimestamp": "2026-01-02T03:04:05Z",
    "deletionTimestamp": "2026-02-03T04:05:06Z",
    "finalizers": ["gardener"],
    "generation": 12,
    "labels": {"kyma-project.io/runtime-id": "rt-\u0031", "shoot.gardener.cloud/status": "healthy"},
    "managedFields": [{"fieldsV1": {"f:spec": {"f:provider": {".": {}, "f:workers": {}}}}, "manager": "gardener", "time": null}],
    "na\u006de": "c-1",
    "resourceVersion": "4711",
    "uid": "0b6f"
  },
  "spec": {
    "provider": {"type": "aws", "workers": [{"name": "w", "minimum": 3, "maximum": -1.5e3, "zones": []}]},
    "credentialsBindingName": "aws-0001",
    "hibernation": {"enabled": false, "schedules": null},
    "secretBindingName": null
  },
  "status": {"conditions": [{"message": "braces { ] in a string", "status": "True"}], "technicalID": "shoot--kyma--c-1"}
}`

func decodeReference(t testing.TB, raw []byte) ShootItem {
	t.Helper()
	var r referenceShoot
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("reference decoder: %v", err)
	}
	return r.item()
}

func TestScannerReadsWhatTheReferenceDecoderReads(t *testing.T) {
	want := decodeReference(t, []byte(servedShoot))
	if want.Metadata.Name != "c-1" || want.Metadata.RuntimeID != "rt-1" || want.Metadata.DeletionTimestamp == "" {
		t.Fatalf("the fixture lost a field: %+v", want)
	}
	readers := map[string]func() io.Reader{
		"whole":         func() io.Reader { return strings.NewReader(servedShoot) },
		"byte by byte":  func() io.Reader { return iotest.OneByteReader(strings.NewReader(servedShoot)) },
		"half and half": func() io.Reader { return iotest.HalfReader(strings.NewReader(servedShoot)) },
	}
	for name, r := range readers {
		var got ShootItem
		s := newScanner(r())
		if err := got.decode(s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.finish(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s: decoded %+v, want %+v", name, got, want)
		}
	}
}

// Names and values longer than the scanner's buffer make it grow, not fail.
func TestScannerReadsTokensLongerThanItsBuffer(t *testing.T) {
	long := strings.Repeat("x", 3*scanBufferSize)
	raw := fmt.Sprintf(`{"metadata":{"%s":"%s","name":"%s","labels":{"kyma-project.io/runtime-id":"rt"}},"spec":{"credentialsBindingName":"b"}}`, long, long, long)
	var got ShootItem
	if err := decodeJSON([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if got.Metadata.Name != long || got.Metadata.RuntimeID != "rt" || got.Spec.CredentialsBindingName != "b" {
		t.Errorf("decoded name of %d bytes, runtime ID %q, binding %q", len(got.Metadata.Name), got.Metadata.RuntimeID, got.Spec.CredentialsBindingName)
	}
}

// A page that breaks off anywhere is an unexpected end, which the list
// repeats as a broken connection, never a shorter page.
func TestEveryCutOfAPageIsAnUnexpectedEnd(t *testing.T) {
	body := `{"apiVersion":"v1","items":[` + servedShoot + `,` + servedShoot + `],"kind":"ShootList","metadata":{"continue":"tok","resourceVersion":"7"}}`
	for cut := 0; cut < len(body); cut++ {
		trimmed := strings.TrimRight(body[:cut], " \n")
		var p Page[ShootItem]
		err := decodePage(newScanner(strings.NewReader(trimmed)), &p)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("page cut after %d bytes: %v, want an unexpected end", cut, err)
		}
	}
}

// The reader's own failure, not a syntax error, is what a broken stream
// reports: the list decides from it whether to repeat the page.
func TestAStreamThatFailsReportsItsOwnError(t *testing.T) {
	broken := errors.New("connection reset by peer")
	r := io.MultiReader(strings.NewReader(servedShoot[:200]), iotest.ErrReader(broken))
	var got ShootItem
	if err := got.decode(newScanner(r)); !errors.Is(err, broken) {
		t.Fatalf("decoded with %v, want the reader's error", err)
	}
}

func TestScannerRefusesMalformedJSON(t *testing.T) {
	for name, raw := range map[string]string{
		"name not a string":       `{"metadata":{"name":5}}`,
		"binding not a string":    `{"spec":{"credentialsBindingName":["a"]}}`,
		"runtime ID not a string": `{"metadata":{"labels":{"kyma-project.io/runtime-id":true}}}`,
		"bad escape":              `{"metadata":{"name":"a\qb"}}`,
		"invalid UTF-8":           "{\"metadata\":{\"name\":\"a\xffb\"}}",
		"control character":       "{\"metadata\":{\"name\":\"a\nb\"}}",
		"mismatched brackets":     `{"status":{"a":[1,2}}}`,
		"closing too much":        `{"status":1]}`,
		"missing colon":           `{"metadata" {"name":"a"}}`,
		"missing comma":           `{"metadata":{"name":"a" "uid":"b"}}`,
		"trailing data":           `{"metadata":{"name":"a"}} {}`,
		"not an object":           `["metadata"]`,
		"member without value":    `{"status":,"spec":{}}`,
		"literal with a brace":    `{"generation":1{}}`,
	} {
		var got ShootItem
		if err := decodeJSON([]byte(raw), &got); err == nil {
			t.Errorf("%s: decoded %+v without an error", name, got)
		}
	}
}

// referenceBinding decodes what BindingItem decodes, with encoding/json/v2.
type referenceBinding struct {
	Metadata struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Provider struct {
		Type string `json:"type"`
	} `json:"provider"`
}

// Wherever the reference decoder accepts a shoot or a binding, the scanner
// reads the same fields; on any input it returns rather than panics.
func FuzzScannerAgreesWithTheReference(f *testing.F) {
	f.Add([]byte(servedShoot))
	f.Add([]byte(`{"metadata":{"name":"a","labels":null},"spec":null}`))
	f.Add([]byte(`{"metadata":{"deletionTimestamp":null,"labels":{"kyma-project.io/runtime-id":"\u0041"}}}`))
	f.Add([]byte(`{"metadata":{"name":"b","labels":{"tenantName":"ga","dirty":null}},"provider":{"type":"aws"}}`))
	f.Add([]byte(`{"metadata":{"name":"c","annotations":{"other":"x","hap-reconciler.kyma-project.io/release":"42"}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var shoot ShootItem
		shootErr := decodeJSON(raw, &shoot)
		var binding BindingItem
		bindingErr := decodeJSON(raw, &binding)

		var rs referenceShoot
		if json.Unmarshal(raw, &rs) == nil { // else the scanner may accept more, in what it skips
			if shootErr != nil {
				t.Fatalf("the reference decodes the shoot %q, the scanner fails: %v", raw, shootErr)
			}
			if want := rs.item(); shoot != want {
				t.Fatalf("decoded the shoot %q as %+v, the reference as %+v", raw, shoot, want)
			}
		}
		var rb referenceBinding
		if json.Unmarshal(raw, &rb) == nil {
			if bindingErr != nil {
				t.Fatalf("the reference decodes the binding %q, the scanner fails: %v", raw, bindingErr)
			}
			m := binding.Metadata
			if m.Name != rb.Metadata.Name || m.ResourceVersion != rb.Metadata.ResourceVersion || binding.Provider.Type != rb.Provider.Type ||
				!maps.Equal(m.Labels, rb.Metadata.Labels) || m.ReleaseID != rb.Metadata.Annotations[hap.AnnotationRelease] {
				t.Fatalf("decoded the binding %q as %+v, the reference as %+v", raw, binding, rb)
			}
		}
	})
}

func TestBindingItemDecodesLabelsAndProvider(t *testing.T) {
	raw := `{"metadata":{"labels":{"hyperscalerType":"aws","tenantName":"ga-1","dirty":null},"name":"aws-1","resourceVersion":"9","managedFields":[{}]},"provider":{"type":"aws"},"credentialsRef":{"kind":"Secret"}}`
	var got BindingItem
	if err := decodeJSON([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"hyperscalerType": "aws", "tenantName": "ga-1", "dirty": ""}
	if got.Metadata.Name != "aws-1" || got.Metadata.ResourceVersion != "9" || got.Provider.Type != "aws" || fmt.Sprint(got.Metadata.Labels) != fmt.Sprint(want) {
		t.Errorf("decoded %+v", got)
	}
	if err := decodeJSON([]byte(`{"metadata":{"labels":{"tenantName":1}}}`), &got); err == nil || !strings.Contains(err.Error(), "tenantName") {
		t.Errorf("a label that is not a string: %v, want an error naming it", err)
	}
	var empty BindingItem
	if err := decodeJSON(bytes.TrimSpace([]byte(" {} \n")), &empty); err != nil || empty.Metadata.Labels != nil {
		t.Errorf("empty binding: %+v, %v", empty, err)
	}
}
