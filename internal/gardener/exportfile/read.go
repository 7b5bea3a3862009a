package exportfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// exportObject is what tells the objects of an export apart.
type exportObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// readExportFile hands every object of one export file to each, together
// with where in the file it was found. The file is what
// `kubectl get shoots,credentialsbindings -o json` (or -o yaml) wrote: a
// List, single objects, a JSON stream or YAML documents, each a List or one
// object.
func readExportFile(path string, each func(raw []byte, where string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("export file: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	first, err := firstByte(r)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("export file %s is empty: want the output of kubectl get shoots,credentialsbindings -o json", path)
	}
	if err != nil {
		return fmt.Errorf("export file %s: %w", path, err)
	}
	if first == '{' {
		// JSON is read item by item: a production export holds tens of
		// thousands of shoots of about 17 KB each.
		return readJSONStream(r, path, each)
	}
	return readYAMLDocuments(r, path, each)
}

func firstByte(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if !strings.ContainsRune(" \t\r\n", rune(b)) {
			return b, r.UnreadByte()
		}
	}
}

// readYAMLDocuments converts each YAML document to JSON and reads that. A
// YAML document is held whole while converted; JSON exports are the cheaper
// choice for a large fleet.
func readYAMLDocuments(r *bufio.Reader, path string, each func(raw []byte, where string) error) error {
	docs := utilyaml.NewYAMLReader(r)
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("export file %s, YAML document %d: %w", path, n, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return fmt.Errorf("export file %s, YAML document %d: %w", path, n, err)
		}
		if trimmed := bytes.TrimSpace(js); len(trimmed) == 0 || string(trimmed) == "null" {
			continue // an empty document, e.g. after a trailing ---
		}
		if err := readJSONStream(bufio.NewReader(bytes.NewReader(js)), fmt.Sprintf("%s, YAML document %d", path, n), each); err != nil {
			return err
		}
	}
}

// readJSONStream reads one or more top-level JSON objects. An object with an
// items array is a list whose items are handed over one at a time; any other
// object is handed over whole.
func readJSONStream(r io.Reader, source string, each func(raw []byte, where string) error) error {
	dec := json.NewDecoder(r)
	for n := 1; ; n++ {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("export file %s: not valid JSON near byte %d: %w", source, dec.InputOffset(), err)
		}
		if tok != json.Delim('{') {
			return fmt.Errorf("export file %s: top-level value %d is %v, want a JSON object (a List or a Shoot or CredentialsBinding)", source, n, tok)
		}
		if err := readTopLevelObject(dec, fmt.Sprintf("%s, object %d", source, n), each); err != nil {
			return err
		}
	}
}

// readTopLevelObject reads the fields of an object whose opening brace was
// consumed. kubectl writes a List's kind after its items, so an items array
// is what marks a list.
func readTopLevelObject(dec *json.Decoder, where string, each func(raw []byte, where string) error) error {
	fields := map[string]json.RawMessage{}
	isList := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fmt.Errorf("export file %s: not valid JSON near byte %d: %w", where, dec.InputOffset(), err)
		}
		if key != "items" {
			var value json.RawMessage
			if err := dec.Decode(&value); err != nil {
				return fmt.Errorf("export file %s, field %v: not valid JSON near byte %d: %w", where, key, dec.InputOffset(), err)
			}
			fields[fmt.Sprint(key)] = value
			continue
		}
		isList = true
		if err := readItems(dec, where, each); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fmt.Errorf("export file %s: not valid JSON near byte %d: %w", where, dec.InputOffset(), err)
	}
	if isList {
		return nil
	}
	whole, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("export file %s: %w", where, err)
	}
	return each(whole, where)
}

func readItems(dec *json.Decoder, where string, each func(raw []byte, where string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("export file %s, items: not valid JSON near byte %d: %w", where, dec.InputOffset(), err)
	}
	if tok == nil {
		return nil // "items": null, an empty list
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("export file %s: items is %v, want an array", where, tok)
	}
	for i := 0; dec.More(); i++ {
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return fmt.Errorf("export file %s, items[%d]: not valid JSON near byte %d: %w", where, i, dec.InputOffset(), err)
		}
		if err := each(item, fmt.Sprintf("%s, items[%d]", where, i)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return fmt.Errorf("export file %s, items: not valid JSON near byte %d: %w", where, dec.InputOffset(), err)
	}
	return nil
}
