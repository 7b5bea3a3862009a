package provisioning

import (
	"errors"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

func TestSchemaRangeReadsItsVersionsAndNamesTheOthers(t *testing.T) {
	r := schema.Range{Oldest: 11, Newest: 12}
	for _, tc := range []struct {
		version int
		dirty   bool
		want    string // "" reads; else a part of the error
	}{
		{11, false, ""},
		{12, false, ""},
		{12, true, ""}, // migration 12 failed or runs: the schema stands as 11 left it
		{13, true, ""},
		{10, false, "records version 10"},
		{13, false, "records version 13"},
		{11, true, "version 11, marked dirty (it stands as version 10 left it)"},
		{0, false, "records no version"},
	} {
		err := r.Check(tc.version, tc.dirty)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("version %d dirty %t: %v, want it read", tc.version, tc.dirty, err)
		case tc.want != "" && (!errors.Is(err, ErrSchemaSkew) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "reads versions 11 to 12")):
			t.Errorf("version %d dirty %t: %v, want ErrSchemaSkew saying %q and the range", tc.version, tc.dirty, err, tc.want)
		case tc.want != "" && !LivePath(err):
			t.Errorf("version %d: %v is no live-path answer", tc.version, err)
		}
	}
}
