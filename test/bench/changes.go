package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// changesMeasured is how many bindings serve's reaction is timed on.
const changesMeasured = 10

// measureChangeToTable times serve's answer to a change: a free binding is
// claimed by a new global account, and the time until the candidate table
// lists it is taken, one change at a time; afterwards every claim is
// taken back. env must be watching with notify as its change callback.
func measureChangeToTable(ctx context.Context, env *app.Env, changes <-chan struct{}, restConfig *rest.Config, namespace, databaseURL string) (PickTail, error) {
	stopping, stop := context.WithCancel(ctx)
	queue := &app.JobQueue{Env: env, Stopping: stopping, JobCtx: ctx, DryRun: jobs.DryRunRelease}
	reacting := make(chan struct{})
	go func() {
		defer close(reacting)
		queue.ReactToChanges(changes)
	}()
	defer func() {
		stop()
		<-reacting
	}()

	client, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return PickTail{}, err
	}
	bindings := client.Resource(testbed.CredentialsBindingsResource).Namespace(namespace)
	free, err := bindings.List(ctx, metav1.ListOptions{LabelSelector: "shared!=true,!dirty,!tenantName,!euAccess"})
	if err != nil {
		return PickTail{}, err
	}
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return PickTail{}, err
	}
	defer db.Close()
	label := func(name string, tenant any) error {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{hap.LabelTenantName: tenant}}})
		_, err := bindings.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	var took []time.Duration
	for i, b := range free.Items {
		if i == changesMeasured {
			break
		}
		start := time.Now()
		if err := label(b.GetName(), fmt.Sprintf("bench-ga-%d", i)); err != nil {
			return PickTail{}, err
		}
		defer func() { _ = label(b.GetName(), nil) }() // a null value removes the label
		for {
			var listed bool
			if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM hap.binding_candidates WHERE binding_name = $1)", b.GetName()).Scan(&listed); err != nil {
				return PickTail{}, err
			}
			if listed {
				break
			}
			select {
			case <-ctx.Done():
				return PickTail{}, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		took = append(took, time.Since(start))
	}
	return tailOf(took), nil
}
