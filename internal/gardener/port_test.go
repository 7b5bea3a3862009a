package gardener

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The port's list logs what it cost: a warning when it started over, and
// at debug level its pages and objects once it is whole.
func TestAListLogsWhatItCost(t *testing.T) {
	testbed.Require(t)
	l, ns := loadLandscape(t, landscape.Options{Seed: 3, GlobalAccounts: 3})
	want := len(l.ExpectedShoots())
	expired := false
	expireOnce := expireTokenAfterPage(t, crdServer(), ns, func(page int) bool {
		if page == 2 && !expired {
			expired = true
			return true
		}
		return false
	})
	core, logs := observer.New(zapcore.DebugLevel)
	c := newClient(t, ns, 3, expireOnce, WithLog(zap.New(core)))
	var got shootCollector
	if err := c.ListShoots(context.Background(), got.reset, got.add); err != nil {
		t.Fatal(err)
	}
	restarted := logs.FilterMessage("list started over after its continue token expired").All()
	if len(restarted) != 1 || restarted[0].Level != zapcore.WarnLevel {
		t.Fatalf("want one warning that the list started over, got %+v", logs.All())
	}
	listed := logs.FilterMessage("listed").All()
	if len(listed) != 1 || listed[0].Level != zapcore.DebugLevel {
		t.Fatalf("want one debug line for the whole list, got %+v", logs.All())
	}
	fields := listed[0].ContextMap()
	if fields["resource"] != "shoots" || fields["objects"] != int64(want) || fields["restarts"] != int64(1) || fields["pages"].(int64) < 3 {
		t.Errorf("listed %v, want shoots, %d objects, 1 restart and more pages than one attempt's", fields, want)
	}
}
