// Package resolvecost measures KEB's resolve step for a runtime's
// CredentialsBinding end to end, both ways in one run, on the real
// gardener-apiserver and PostgreSQL through KEB's driver (lib/pq) and a
// Gardener client built as KEB builds its own (common/gardener/client.go):
// a dynamic client, JSON, every call under a 10 s timeout.
//
//   - KEB's live path: the LIST of the GA's bindings by the tenant selector
//     and one grouped count in KEB's instances table (dedicated pool), or
//     the LIST of the pool's shared bindings and the unpaged LIST of every
//     shoot of the namespace (shared pool); then KEB's instance update.
//   - The adopted step: provisioning.Client.NextBinding (one statement on
//     the job's candidate table, then Gardener's confirmation), then KEB's
//     instance update.
//   - The statement alone (provisioning.Client.Propose), unconfirmed: what
//     bounds the adopted step from below.
//
// TestResolveCost is the measurement (make resolve-cost); TestResolveCostSmoke
// runs the same cells on a tiny landscape and checks only what each path
// picked.
package resolvecost

import (
	"testing"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var bed *testbed.Bed

func TestMain(m *testing.M) { testbed.Main(m, testbed.Setup{Bed: &bed}) }
