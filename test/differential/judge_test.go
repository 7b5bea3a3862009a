package differential

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
)

// The outcomes of a pick. The first five must never happen.
const (
	outcomeAgree = "agree"

	// The table's binding is at or above KEB's limit by KEB's own count now.
	outcomeOverFilled = "over-filled account"
	// ClaimNew while the GA holds a binding below its limit now.
	outcomeNeedlessClaim = "needless claim"
	// ClaimNew for a shared pool: KEB never claims a shared binding.
	outcomeSharedClaimed = "shared binding claimed"
	// The table's binding is not labelled tenantName=<GA> now.
	outcomeCrossTenant = "cross-tenant pick"
	// The table's binding is labelled dirty now (retired by an operator, or
	// freed by KEB's step whose withdrawal was lost).
	outcomeDirtyUsed = "dirty or withdrawn binding used"
)

// The differences the table may have from KEB's live answer, each with why
// it is acceptable. Any other difference fails the test.
const (
	diffStale          = "stale table: KEB's live path"
	diffInFlight       = "order: reservation KEB has not written yet"
	diffGardenerFull   = "job's deviation: Gardener's shoots fill the binding"
	diffSharedOrder    = "shared order: shoots as of the snapshot"
	diffUnknownBinding = "order: binding claimed on KEB's live path since the snapshot"
	// Hand-offs: the table's answer sends KEB to its live path, which
	// decides on the live state (the stream then acts as KEB's live path).
	handOffClaimedSince = "hand-off: Gardener lists bindings of the GA the table does not"
	handOffRejected     = "hand-off: Gardener rejected the table's proposals"
	handOffSharedEmpty  = "hand-off: the table holds no binding of the shared pool"
	handOffTimedOut     = "hand-off: the pick outlasted the client's Timeout"
	// A trusted answer (no call to Gardener) that a change the table had
	// not seen yet makes differ.
	diffUnseenChange = "trusted table: a change in Gardener after the table last saw it"
)

var declaredDifferences = map[string]string{
	diffStale: "the table was never computed or is older than MaxAge: NextBinding answers ErrStale and KEB " +
		"resolves live, so KEB's answer stands",
	diffInFlight: "a pick reserved a place that KEB has not yet written into the instance row (another replica's pick " +
		"of the same moment); the table counts it, KEB's count does not, and the order below the limit moves by it",
	diffGardenerFull: "the job deliberately treats a binding whose Gardener shoots reach the limit as full, though KEB's " +
		"instance count is below it: the shoots Gardener shows now, or KEB's count now plus the shoots Gardener showed " +
		"beyond KEB's count at the snapshot (a shoot deleted since still counts until the next snapshot)",
	diffSharedOrder: "a shared pick orders by the snapshot's shoots plus the placements since; KEB counts the shoots " +
		"now, so a shoot deleted since the snapshot still counts for the table",
	handOffClaimedSince: "the GA's bindings in Gardener differ from the table's (claimed on KEB's live path, labelled by " +
		"hand or withdrawn since the snapshot) where the table would claim or guard: KEB's live path decides",
	handOffRejected: "Gardener rejected every binding the table proposed (dirty, another tenant, pool or provider): " +
		"KEB's live path decides",
	handOffSharedEmpty: "the table holds no binding of the shared pool (none at the snapshot, or added since): KEB's " +
		"live path lists the pool now",
	handOffTimedOut: "the pick's statement outlasted provisioning.Client.Timeout on a busy database and PostgreSQL " +
		"cancelled it (57014): an error, so KEB's live path decides",
	diffUnseenChange: "the table had seen Gardener within the client's SeenWithin and answered without asking it, and " +
		"the binding (or one of the GA's) changed in Gardener after the table last saw it: the window KEB's live path " +
		"has between its list and the shoot, bounded by SeenWithin",
	diffUnknownBinding: "KEB's live path claimed a binding without RecordClaim since the snapshot (or reclaimed one the free " +
		"step withdrew); the table offers it from the job's next run on (a minute after the withdrawal), until then " +
		"another binding of the GA below the limit",
}

func undeclared(what string) string { return "undeclared: " + what }

// pickCase is one pick: the table's answer and KEB's at the same moment.
type pickCase struct {
	c    *cluster
	got  provisioning.Pick
	err  error
	want kebrules.Verdict
	// at is when the table's answer came back, for unseenBy.
	at time.Time
	// excessBefore is the shoots beyond KEB's count at the snapshot, per
	// binding of the GA and pool, as the table held them just before the
	// pick: a rewrite that commits between the pick and the judge (serve's,
	// seconds apart) may have replaced the version the pick read.
	excessBefore map[string]int
}

func (pc pickCase) answer() string {
	switch {
	case pc.err != nil:
		return "error " + pc.err.Error()
	case pc.got.ClaimNew:
		return "claim new"
	}
	return pc.got.Binding
}

// unexpected is a NextBinding error KEB would meet only with a broken
// database: a failure of the bed, not a difference.
func unexpected(err error) bool {
	for _, answer := range []error{provisioning.ErrStale, provisioning.ErrGuarded, provisioning.ErrSharedPoolEmpty,
		provisioning.ErrClaimedSince, provisioning.ErrRejected} {
		if errors.Is(err, answer) {
			return false
		}
	}
	return err != nil && !timedOut(err)
}

// timedOut is a pick the client's own Timeout cut off: the stream's
// context is far longer, so a cancelled statement (57014, lib/pq's answer
// to the cancelled context) is the module's bound, met on a busy machine.
func timedOut(err error) bool {
	var pqErr *pq.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &pqErr) && pqErr.Code == "57014"
}

// handOff names the hand-off err is, "" when it is none.
func handOff(err error) string {
	switch {
	case timedOut(err):
		return handOffTimedOut
	case errors.Is(err, provisioning.ErrClaimedSince):
		return handOffClaimedSince
	case errors.Is(err, provisioning.ErrRejected):
		return handOffRejected
	case errors.Is(err, provisioning.ErrSharedPoolEmpty):
		return handOffSharedEmpty
	}
	return ""
}

// judge classifies a pick; the live state it reads is the moment of the
// pick, nothing having acted in between.
func (s *stream) judge(ctx context.Context, pc pickCase) (string, error) {
	if unexpected(pc.err) {
		return "", fmt.Errorf("pick for %s: %w", pc.c.instanceID, pc.err)
	}
	if timedOut(pc.err) {
		return handOffTimedOut, nil
	}
	if pc.c.shared {
		return judgeShared(pc), nil
	}
	switch {
	case errors.Is(pc.err, provisioning.ErrStale):
		return diffStale, nil
	case errors.Is(pc.err, provisioning.ErrSharedPoolEmpty):
		return undeclared("no shared binding for a dedicated request"), nil
	case handOff(pc.err) != "":
		return handOff(pc.err), nil
	case errors.Is(pc.err, provisioning.ErrGuarded) && pc.want.Guarded:
		return outcomeAgree, nil
	case (errors.Is(pc.err, provisioning.ErrGuarded) || pc.want.Guarded) && s.unseenBy(pc.got, pc.at, pc.want.Held...):
		return diffUnseenChange, nil
	case errors.Is(pc.err, provisioning.ErrGuarded):
		return undeclared("guarded where KEB's guard does not hold"), nil
	case pc.want.Guarded:
		return undeclared("answered where KEB's guard stops the GA"), nil
	case pc.got.ClaimNew:
		return s.judgeClaim(ctx, pc)
	}
	return s.judgeBinding(ctx, pc)
}

func judgeShared(pc pickCase) string {
	switch {
	case errors.Is(pc.err, provisioning.ErrStale):
		return diffStale
	case pc.got.ClaimNew:
		return outcomeSharedClaimed
	case handOff(pc.err) != "":
		return handOff(pc.err)
	case pc.err != nil:
		return undeclared("shared pick answered " + pc.err.Error())
	case pc.want.NoBinding:
		return undeclared("a binding from a shared pool KEB finds empty")
	case pc.got.Binding == pc.want.Binding:
		return outcomeAgree
	case !slices.Contains(pc.want.Held, pc.got.Binding):
		return undeclared("a binding outside the shared pool")
	}
	return diffSharedOrder
}

// judgeClaim: the table said ClaimNew.
func (s *stream) judgeClaim(ctx context.Context, pc pickCase) (string, error) {
	if pc.want.ClaimNew {
		return outcomeAgree, nil
	}
	full, err := s.gardenerFull(ctx, pc, belowLimit(pc.want))
	if err != nil || full {
		return diffGardenerFull, err
	}
	if s.unseenBy(pc.got, pc.at, pc.want.Held...) {
		return diffUnseenChange, nil
	}
	cause, err := s.claimCause(ctx, pc)
	return outcomeNeedlessClaim + ": " + cause, err
}

// Why the table said ClaimNew where KEB uses a binding below its limit,
// as far as the test can tell; the cause goes into the report.
const (
	causeUnknown     = "the binding was claimed on KEB's live path and the table does not offer it"
	causeUnexplained = "unexplained"
)

func (s *stream) claimCause(ctx context.Context, pc pickCase) (string, error) {
	listed, err := s.tableLists(ctx, pc.c, pc.want.Binding)
	switch {
	case err != nil:
		return "", err
	case !listed:
		return causeUnknown, nil
	}
	return causeUnexplained, nil
}

// judgeBinding: the table named a binding. It must be the GA's now (its
// tenantName label), and below KEB's limit by KEB's own count now; a
// binding KEB's selector does not return at all is undeclared; any other
// difference is one of order, explained by explainOrder.
func (s *stream) judgeBinding(ctx context.Context, pc pickCase) (string, error) {
	got := pc.got.Binding
	if got == pc.want.Binding {
		return outcomeAgree, nil
	}
	b, err := s.keb.Bindings.Get(ctx, got, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get binding %s: %w", got, err)
	}
	_, dirty := b.GetLabels()[hap.LabelDirty]
	foreign := kebrules.TenantOf(b.GetLabels()) != gaOf(pc.c)
	switch {
	case (foreign || dirty || !slices.Contains(pc.want.Held, got)) && s.unseenBy(pc.got, pc.at, got):
		return diffUnseenChange, nil
	case foreign:
		return outcomeCrossTenant, nil
	case dirty:
		return outcomeDirtyUsed, nil
	case !slices.Contains(pc.want.Held, got):
		return undeclared("a binding outside KEB's selector"), nil
	}
	if pc.want.Limit > 0 && pc.want.Counts[got] >= pc.want.Limit {
		return outcomeOverFilled, nil
	}
	return s.explainOrder(ctx, pc)
}

// explainOrder finds why the table chose another binding below the limit
// than KEB: KEB's rule on its counts plus the reservations the table still
// counts gives the table's choice, or the table does not know KEB's
// binding yet, or Gardener shows KEB's binding full.
func (s *stream) explainOrder(ctx context.Context, pc pickCase) (string, error) {
	inFlight, err := s.outstanding(ctx, pc.want.Held, pc.c.instanceID)
	if err != nil {
		return "", err
	}
	// Another replica's reservation may have been made before or after
	// this pick.
	if s.chooseWith(pc.want, inFlight).Binding == pc.got.Binding {
		return diffInFlight, nil
	}
	listed, err := s.tableLists(ctx, pc.c, pc.want.Binding)
	if err != nil || !listed {
		return diffUnknownBinding, err
	}
	// Both at once: among the bindings the table offers, KEB's rule with
	// the reservations in flight gives the table's choice.
	offered := pc.want
	offered.Held = nil
	for _, name := range pc.want.Held {
		listed, err := s.tableLists(ctx, pc.c, name)
		if err != nil {
			return "", err
		}
		if listed {
			offered.Held = append(offered.Held, name)
		}
	}
	if len(offered.Held) < len(pc.want.Held) && s.chooseWith(offered, inFlight).Binding == pc.got.Binding {
		return diffUnknownBinding, nil
	}
	full, err := s.gardenerFull(ctx, pc, []string{pc.want.Binding})
	if err != nil || full {
		return diffGardenerFull, err
	}
	return undeclared("order among bindings below the limit"), nil
}

// chooseWith is KEB's decision had its counts included extra.
func (s *stream) chooseWith(want kebrules.Verdict, extra ...map[string]int) kebrules.Decision {
	seen := want.Seen
	seen.Counts = map[string]int{}
	for _, n := range seen.Held {
		seen.Counts[n] = want.Counts[n]
		for _, e := range extra {
			seen.Counts[n] += e[n]
		}
	}
	return kebrules.Decide(seen, s.keb.Config.MinBindingsForGuard)
}

// tableLists reports whether the candidate table offers binding to the
// cluster's GA and pool: a row of theirs that no free step withdrew.
func (s *stream) tableLists(ctx context.Context, c *cluster, binding string) (bool, error) {
	var listed bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM hap.binding_candidates c
		WHERE binding_name = $1 AND global_account_id = $2 AND hyperscaler_type = $3 AND eu_access = $4
		  AND NOT EXISTS (SELECT 1 FROM hap.withdrawn_bindings w WHERE w.binding_name = c.binding_name))`,
		binding, gaOf(c), c.pool.HyperscalerType, c.pool.EUAccess).Scan(&listed)
	if err != nil {
		return false, fmt.Errorf("look up the table's row of %s: %w", binding, err)
	}
	return listed, nil
}

// belowLimit names the bindings KEB sees below the GA's limit.
func belowLimit(v kebrules.Verdict) []string {
	var out []string
	for _, n := range v.Held {
		if v.Limit == 0 || v.Counts[n] < v.Limit {
			out = append(out, n)
		}
	}
	return out
}

// gardenerFull reports whether Gardener's shoots fill every one of names
// to the GA's limit: the job's deliberate deviation. The pick counts KEB's
// instances now plus the shoots Gardener showed beyond KEB's count at the
// snapshot (read-path.md), so a binding is full by Gardener's shoots when
// those fill it, or when the shoots Gardener shows now do.
func (s *stream) gardenerFull(ctx context.Context, pc pickCase, names []string) (bool, error) {
	v := pc.want
	if v.Limit == 0 || len(names) == 0 {
		return false, nil
	}
	usage, err := s.keb.ShootsPerBinding(ctx)
	if err != nil {
		return false, err
	}
	excess, err := s.excess(ctx, names)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		// The pick read the version of the row held before it or one
		// written since: either may be the one it counted.
		seen := max(excess[n], pc.excessBefore[n])
		if usage[n] < v.Limit && v.Counts[n]+seen < v.Limit {
			return false, nil
		}
	}
	return true, nil
}

// excess is, per binding of names, the shoots beyond KEB's count at the
// snapshot the candidate table holds now.
func (s *stream) excess(ctx context.Context, names []string) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT binding_name, greatest(effective_count - db_count, 0)
		FROM hap.binding_candidates WHERE binding_name = ANY($1)`, names)
	if err != nil {
		return nil, fmt.Errorf("read the shoots beyond KEB's count at the snapshot: %w", err)
	}
	return kebrules.ScanCounts(rows)
}

// excessOfGroup is excess for every binding the table holds for the
// cluster's GA and pool.
func (s *stream) excessOfGroup(ctx context.Context, c *cluster) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT binding_name, greatest(effective_count - db_count, 0)
		FROM hap.binding_candidates WHERE global_account_id = $1 AND hyperscaler_type = $2 AND eu_access = $3`,
		gaOf(c), c.pool.HyperscalerType, c.pool.EUAccess)
	if err != nil {
		return nil, fmt.Errorf("read the shoots beyond KEB's count at the snapshot: %w", err)
	}
	return kebrules.ScanCounts(rows)
}

// outstanding counts, per binding, the table's reservations in flight,
// other than the pick's own: the instance is active and KEB has not
// written its binding yet. The read path counts those, KEB's count cannot
// see them.
func (s *stream) outstanding(ctx context.Context, names []string, self string) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT r.binding_name, count(*)
		FROM hap.binding_reservations r
		JOIN instances i ON i.instance_id = r.instance_id
		WHERE r.binding_name = ANY($1) AND r.instance_id <> $2
		  AND i.deleted_at = '0001-01-01 00:00:00+00' AND coalesce(i.subscription_secret_name, '') = ''
		GROUP BY r.binding_name`, names, self)
	if err != nil {
		return nil, fmt.Errorf("read outstanding reservations: %w", err)
	}
	return kebrules.ScanCounts(rows)
}

// evidence describes the table's side of a failing pick: its rows for the
// GA and pool and the reservations on them.
func (s *stream) evidence(ctx context.Context, pc pickCase) string {
	rows, err := s.db.QueryContext(ctx, `
		SELECT c.binding_name, c.db_count, c.shoot_count, c.effective_count, coalesce(c.cluster_limit, -1),
		       (SELECT count(*) FROM hap.binding_reservations r WHERE r.binding_name = c.binding_name),
		       c.computed_at::text, EXISTS (SELECT 1 FROM hap.withdrawn_bindings w WHERE w.binding_name = c.binding_name),
		       coalesce((SELECT string_agg(r.instance_id, ',') FROM hap.binding_reservations r WHERE r.binding_name = c.binding_name), '')
		FROM hap.binding_candidates c
		WHERE c.global_account_id = $1 AND c.hyperscaler_type = $2 AND c.eu_access = $3
		ORDER BY c.binding_name COLLATE "C"`, gaOf(pc.c), pc.c.pool.HyperscalerType, pc.c.pool.EUAccess)
	if err != nil {
		return "table rows: " + err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var name, computed, reservations string
		var db, shoots, effective, limit, reserved int
		var withdrawn bool
		if err := rows.Scan(&name, &db, &shoots, &effective, &limit, &reserved, &computed, &withdrawn, &reservations); err != nil {
			return "table rows: " + err.Error()
		}
		fmt.Fprintf(&b, "\n    row %s db %d shoots %d effective %d limit %d reserved %d (%s) withdrawn %t computed %s",
			name, db, shoots, effective, limit, reserved, reservations, withdrawn, computed)
	}
	if b.Len() == 0 {
		return "\n    the table has no row for the GA and pool"
	}
	if pc.excessBefore != nil {
		fmt.Fprintf(&b, "\n    shoots beyond KEB's count just before the pick: %v", pc.excessBefore)
	}
	return b.String()
}

func gaOf(c *cluster) string {
	if c.shared {
		return ""
	}
	return c.ga
}
