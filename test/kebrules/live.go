package kebrules

import (
	"context"
	"database/sql"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// KEB evaluates KEB's rules on the live state: the project's bindings and
// shoots on the API server, KEB's instances table in PostgreSQL.
type KEB struct {
	Bindings, Shoots dynamic.ResourceInterface
	DB               *sql.DB
	Config           Config
	// Changed, when set, hears of every binding Update wrote.
	Changed func(binding string)
}

// List is KEB's List with a label selector; the API server returns the
// items in byte order of their names, as KEB receives them.
func (k *KEB) List(ctx context.Context, selector string) ([]unstructured.Unstructured, error) {
	l, err := k.Bindings.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list bindings with %q: %w", selector, err)
	}
	return l.Items, nil
}

// Dedicated is KEB's resolution for ga in a pool that is not shared.
func (k *KEB) Dedicated(ctx context.Context, ga string, p hap.Pool) (Verdict, error) {
	items, err := k.List(ctx, TenantSelector(p, ga))
	if err != nil {
		return Verdict{}, err
	}
	held := make([]string, len(items))
	for i, it := range items {
		held[i] = it.GetName()
	}
	v := Verdict{Seen: Seen{Held: held, Counts: map[string]int{}}}
	if k.Config.IsGlobalAccountAllowed(ga) {
		v.Limit = k.Config.LimitForProvider(providerOf(p.HyperscalerType))
		if v.Counts, err = k.CountPerBinding(ctx, ga, held); err != nil {
			return Verdict{}, err
		}
	}
	v.Decision = Decide(v.Seen, k.Config.MinBindingsForGuard)
	return v, nil
}

// CountPerBinding counts the GA's active instances per binding with KEB's
// condition (GetInstanceCountPerBinding): rows on the GA's own
// subscription, or on an empty subscription and of the GA. A NULL
// subscription makes the condition NULL: the row counts for no GA.
func (k *KEB) CountPerBinding(ctx context.Context, ga string, names []string) (map[string]int, error) {
	rows, err := k.DB.QueryContext(ctx, `
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
	return ScanCounts(rows)
}

// ScanCounts reads rows of (name, count), as a GROUP BY of one name
// returns them, into a map, and closes rows.
func ScanCounts(rows *sql.Rows) (map[string]int, error) {
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

// Shared is KEB's pick in a shared pool, by the shoots naming each of its
// bindings now.
func (k *KEB) Shared(ctx context.Context, p hap.Pool) (Verdict, error) {
	items, err := k.List(ctx, SharedSelector(p))
	if err != nil {
		return Verdict{}, err
	}
	if len(items) == 0 {
		return Verdict{Decision: Decision{NoBinding: true}}, nil
	}
	usage, err := k.ShootsPerBinding(ctx)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Seen: Seen{Counts: map[string]int{}}}
	for _, it := range items {
		v.Held = append(v.Held, it.GetName())
		v.Counts[it.GetName()] = usage[it.GetName()]
	}
	v.Binding = LeastUsed(v.Seen)
	return v, nil
}

// ShootsPerBinding counts the shoots naming each binding right now, by
// spec.credentialsBindingName.
func (k *KEB) ShootsPerBinding(ctx context.Context) (map[string]int, error) {
	l, err := k.Shoots.List(ctx, metav1.ListOptions{})
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
