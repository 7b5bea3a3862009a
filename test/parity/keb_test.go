package parity

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// This file states KEB's choice on KEB's own terms, without the job's code:
// the label selectors of internal/subscriptions/label_selector.go sent to the
// API server, the count of GetInstanceCountPerBinding sent to PostgreSQL, and
// selectBindingBelowLimit, the guard of resolveWithMultiAccountSupport,
// LimitForProvider and GetLeastUsedCredentialsBindingFromSecretBindings
// written out below.

var (
	bindingsGVR = schema.GroupVersionResource{Group: "security.gardener.cloud", Version: "v1alpha1", Resource: "credentialsbindings"}
	shootsGVR   = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
)

// kebConfig is KEB's multi-account configuration as KEB holds it.
type kebConfig struct {
	allowed             []string
	limits              map[string]int // "default" and KEB's provider fields
	minBindingsForGuard int
}

func (c kebConfig) allowedGA(ga string) bool {
	for _, a := range c.allowed {
		if a == "*" || a == ga {
			return true
		}
	}
	return false
}

func (c kebConfig) limitFor(provider string) int {
	field := map[string]string{"aws": "aws", "gcp": "gcp", "azure": "azure", "openstack": "openstack",
		"sapconvergedcloud": "openstack", "sap-converged-cloud": "openstack", "alicloud": "alicloud"}[strings.ToLower(provider)]
	limit := 0
	if field != "" {
		limit = c.limits[field]
	}
	if limit == 0 {
		limit = c.limits["default"]
	}
	if limit == 0 {
		return 999999
	}
	return limit
}

// kebVerdict is what KEB does for one provisioning.
type kebVerdict struct {
	binding  string
	claimNew bool
	guarded  bool
	// noAccount: a shared pool without a binding; KEB fails the
	// provisioning (getSharedCredentialsName), it never claims.
	noAccount bool
}

func (v kebVerdict) String() string {
	switch {
	case v.noAccount:
		return "no account"
	case v.guarded:
		return "guarded"
	case v.claimNew:
		return "claim new"
	}
	return v.binding
}

type keb struct {
	gardener  dynamic.ResourceInterface
	shoots    dynamic.ResourceInterface
	db        *sql.DB
	cfg       kebConfig
	namespace string
}

func newKEB(dyn dynamic.Interface, namespace string, db *sql.DB, cfg kebConfig) *keb {
	return &keb{gardener: dyn.Resource(bindingsGVR).Namespace(namespace), shoots: dyn.Resource(shootsGVR).Namespace(namespace),
		db: db, cfg: cfg, namespace: namespace}
}

func euRequirement(eu bool) string {
	if eu {
		return "euAccess=true"
	}
	return "!euAccess"
}

func (k *keb) list(ctx context.Context, selector string) ([]unstructured.Unstructured, error) {
	l, err := k.gardener.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list with %q: %w", selector, err)
	}
	return l.Items, nil
}

// dedicated is KEB's resolution for a GA in a non-shared pool.
func (k *keb) dedicated(ctx context.Context, ga, hyperscalerType string, eu bool) (kebVerdict, error) {
	selector := fmt.Sprintf("hyperscalerType=%s,%s,shared!=true,!dirty,tenantName=%s", hyperscalerType, euRequirement(eu), ga)
	items, err := k.list(ctx, selector)
	if err != nil {
		return kebVerdict{}, err
	}
	if !k.cfg.allowedGA(ga) {
		if len(items) == 0 {
			return kebVerdict{claimNew: true}, nil
		}
		return kebVerdict{binding: items[0].GetName()}, nil
	}
	if len(items) == 0 {
		return kebVerdict{claimNew: true}, nil
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.GetName()
	}
	counts, err := k.countPerBinding(ctx, ga, names)
	if err != nil {
		return kebVerdict{}, err
	}
	if min := k.cfg.minBindingsForGuard; min > 0 && len(names) >= min {
		empty := true
		for _, n := range names {
			if counts[n] > 0 {
				empty = false
			}
		}
		if empty {
			return kebVerdict{guarded: true}, nil
		}
	}
	provider := strings.SplitN(hyperscalerType, "_", 2)[0]
	limit := k.cfg.limitFor(provider)
	selected, selectedCount := "", -1
	for _, n := range names {
		if c := counts[n]; c < limit && c > selectedCount {
			selected, selectedCount = n, c
		}
	}
	if selected == "" {
		return kebVerdict{claimNew: true}, nil
	}
	return kebVerdict{binding: selected}, nil
}

// countPerBinding counts the GA's active instances per binding with KEB's
// condition (GetInstanceCountPerBinding in internal/storage/postsql/read.go):
// rows on the GA's own subscription, or on an empty subscription and of the
// GA. A NULL subscription makes the condition NULL: the row counts for no GA.
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

// shared is KEB's pick in a shared pool: the binding the fewest shoots name
// in spec.credentialsBindingName, the first in list order on a tie.
func (k *keb) shared(ctx context.Context, hyperscalerType string, eu bool) (kebVerdict, error) {
	items, err := k.list(ctx, fmt.Sprintf("hyperscalerType=%s,%s,shared=true", hyperscalerType, euRequirement(eu)))
	if err != nil {
		return kebVerdict{}, err
	}
	if len(items) == 0 {
		return kebVerdict{noAccount: true}, nil // KEB fails: no account; the job has no row either
	}
	usage := map[string]int{}
	for _, it := range items {
		usage[it.GetName()] = 0
	}
	shoots, err := k.shoots.List(ctx, metav1.ListOptions{})
	if err != nil {
		return kebVerdict{}, err
	}
	for _, s := range shoots.Items {
		name, _, _ := unstructured.NestedString(s.Object, "spec", "credentialsBindingName")
		if n, ok := usage[name]; ok {
			usage[name] = n + 1
		}
	}
	min, at := usage[items[0].GetName()], 0
	for i, it := range items {
		if usage[it.GetName()] < min {
			min, at = usage[it.GetName()], i
		}
	}
	return kebVerdict{binding: items[at].GetName()}, nil
}
