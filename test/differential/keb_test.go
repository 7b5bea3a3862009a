package differential

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// This file states KEB's choice on KEB's own terms, without the job's code:
// the label selectors of internal/subscriptions/label_selector.go sent to
// the live API server, the count of GetInstanceCountPerBinding sent to
// PostgreSQL, and resolveWithMultiAccountSupport's guard and
// selectBindingBelowLimit, and GetLeastUsedCredentialsBindingFromSecretBindings,
// written out below.

// KEB's labels, spelled out here rather than taken from the job.
const (
	labelHyperscalerType = "hyperscalerType"
	labelEUAccess        = "euAccess"
	labelTenantName      = "tenantName"
	labelShared          = "shared"
	labelDirty           = "dirty"
	labelInternal        = "internal"
)

// pool is what KEB's rules name: the hyperscalerType and EU access.
type pool struct {
	hyperscalerType string
	eu              bool
}

func (p pool) String() string {
	if p.eu {
		return p.hyperscalerType + "(eu)"
	}
	return p.hyperscalerType
}

// selector is the pool's part of KEB's label selectors.
func (p pool) selector() string {
	eu := "!" + labelEUAccess
	if p.eu {
		eu = labelEUAccess + "=true"
	}
	return labelHyperscalerType + "=" + p.hyperscalerType + "," + eu
}

// kebConfig is KEB's multi-account configuration for the stream; it is
// also the provisioning.MultiAccountConfig AccountFor reads.
type kebConfig struct {
	allowed             map[string]bool
	limit               int // KEB's default; no provider field is set
	minBindingsForGuard int
}

func (c kebConfig) IsGlobalAccountAllowed(ga string) bool { return c.allowed[ga] }
func (c kebConfig) LimitForProvider(string) int           { return c.limit }

// verdict is what KEB does for one provisioning, with what it saw.
type verdict struct {
	binding string
	// claimNew: no binding of the GA is below its limit (or it holds none).
	claimNew bool
	guarded  bool
	// noBinding: a shared pool without a binding; KEB fails.
	noBinding bool
	// held lists the bindings KEB's selector returned, in list order.
	held []string
	// counts is KEB's count of the GA's active instances per binding, or,
	// for a shared pool, the shoots naming each binding.
	counts map[string]int
	// limit is the GA's limit; 0 for a GA off the allowlist (no limit).
	limit int
}

func (v verdict) String() string {
	switch {
	case v.guarded:
		return "guarded"
	case v.noBinding:
		return "no shared binding"
	case v.claimNew:
		return "claim new"
	}
	return v.binding
}

// keb evaluates KEB's rules on the live state.
type keb struct {
	bindings, shoots dynamic.ResourceInterface
	db               *sql.DB
	cfg              kebConfig
}

// list is KEB's List with a label selector; the API server returns the
// items in byte order of their names, as KEB receives them.
func (k *keb) list(ctx context.Context, selector string) ([]unstructured.Unstructured, error) {
	l, err := k.bindings.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list bindings with %q: %w", selector, err)
	}
	return l.Items, nil
}

// dedicated is KEB's resolution for ga in a pool that is not shared.
func (k *keb) dedicated(ctx context.Context, ga string, p pool) (verdict, error) {
	items, err := k.list(ctx, fmt.Sprintf("%s,%s!=true,!%s,%s=%s", p.selector(), labelShared, labelDirty, labelTenantName, ga))
	if err != nil {
		return verdict{}, err
	}
	held := make([]string, len(items))
	for i, it := range items {
		held[i] = it.GetName()
	}
	v := verdict{held: held, counts: map[string]int{}}
	if k.cfg.allowed[ga] {
		v.limit = k.cfg.limit
		if v.counts, err = k.countPerBinding(ctx, ga, held); err != nil {
			return verdict{}, err
		}
	}
	choose(&v, k.cfg.minBindingsForGuard)
	return v, nil
}

// choose is KEB's decision on what it saw: off the allowlist the first
// binding; on it the guard, then the most populated binding below the
// limit, ties to the first in list order; none: claim a new one.
func choose(v *verdict, minBindingsForGuard int) {
	v.binding, v.claimNew, v.guarded = "", false, false
	if len(v.held) == 0 {
		v.claimNew = true
		return
	}
	if v.limit == 0 {
		v.binding = v.held[0]
		return
	}
	if minBindingsForGuard > 0 && len(v.held) >= minBindingsForGuard &&
		!slices.ContainsFunc(v.held, func(n string) bool { return v.counts[n] > 0 }) {
		v.guarded = true
		return
	}
	best := -1
	for _, n := range v.held {
		if c := v.counts[n]; c < v.limit && c > best {
			v.binding, best = n, c
		}
	}
	v.claimNew = v.binding == ""
}

// countPerBinding is GetInstanceCountPerBinding: the GA's active
// instances per binding, the owner being the subscription GA when set.
func (k *keb) countPerBinding(ctx context.Context, ga string, names []string) (map[string]int, error) {
	rows, err := k.db.QueryContext(ctx, `
		SELECT subscription_secret_name, count(*)
		FROM instances
		WHERE subscription_secret_name = ANY($1)
		  AND deleted_at = '0001-01-01 00:00:00+00'
		  AND ((subscription_global_account_id <> '' AND subscription_global_account_id = $2)
		       OR (global_account_id = $2 AND subscription_global_account_id = ''))
		GROUP BY subscription_secret_name`, names, ga)
	if err != nil {
		return nil, fmt.Errorf("count instances per binding: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		out[name] = n
	}
	return out, rows.Err()
}

// shared is KEB's pick in a shared pool: the binding the fewest shoots
// name, strictly fewer to displace the first in list order.
func (k *keb) shared(ctx context.Context, p pool) (verdict, error) {
	items, err := k.list(ctx, fmt.Sprintf("%s,%s=true", p.selector(), labelShared))
	if err != nil {
		return verdict{}, err
	}
	if len(items) == 0 {
		return verdict{noBinding: true}, nil
	}
	usage, err := k.shootsPerBinding(ctx)
	if err != nil {
		return verdict{}, err
	}
	v := verdict{counts: map[string]int{}}
	for _, it := range items {
		v.held = append(v.held, it.GetName())
		v.counts[it.GetName()] = usage[it.GetName()]
	}
	v.binding = v.held[0]
	for _, n := range v.held {
		if v.counts[n] < v.counts[v.binding] {
			v.binding = n
		}
	}
	return v, nil
}

// shootsPerBinding counts the shoots naming each binding right now, by
// spec.credentialsBindingName.
func (k *keb) shootsPerBinding(ctx context.Context) (map[string]int, error) {
	l, err := k.shoots.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list shoots: %w", err)
	}
	out := map[string]int{}
	for _, s := range l.Items {
		if name, _, _ := unstructured.NestedString(s.Object, "spec", "credentialsBindingName"); name != "" {
			out[name]++
		}
	}
	return out, nil
}

// labelsOf reads one binding's labels now; nil when it is gone.
func (k *keb) labelsOf(ctx context.Context, name string) (map[string]string, error) {
	b, err := k.bindings.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get binding %s: %w", name, err)
	}
	return b.GetLabels(), nil
}
