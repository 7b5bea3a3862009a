package landscape

import (
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// conditionTexts are the health checks Gardener reports on every shoot.
var conditionTexts = []struct{ kind, reason, message string }{
	{"APIServerAvailable", "HealthzRequestSucceeded", "API server /healthz endpoint responded with success status code."},
	{"ControlPlaneHealthy", "ControlPlaneRunning", "All control plane components are healthy."},
	{"ObservabilityComponentsHealthy", "ObservabilityComponentsRunning", "All observability components are healthy."},
	{"EveryNodeReady", "EveryNodeReady", "All nodes are ready."},
	{"SystemComponentsHealthy", "SystemComponentsRunning", "All system components are healthy."},
}

var constraintTexts = []struct{ kind, reason, message string }{
	{"HibernationPossible", "NoProblematicWebhooks", "All webhooks are properly configured."},
	{"MaintenancePreconditionsSatisfied", "NoProblematicWebhooks", "All webhooks are properly configured."},
	{"CACertificateValiditiesAcceptable", "NoProblematicCACertificates", "All CA certificates are still valid for at least 8760h0m0s."},
	{"CRDsWithProblematicConversionWebhooks", "NoProblematicConversionWebhooks", "All CRDs with conversion webhooks are properly configured."},
	{"ManualInPlaceWorkersUpdated", "NoManualInPlaceWorkers", "No worker pool uses the manual in-place update strategy."},
}

func shootStatus(r *random, name string, p PoolProfile, created time.Time) gardencorev1beta1.ShootStatus {
	technicalID := "shoot--kyma--" + name
	uid := types.UID(r.uuid())
	lastReconcile := metav1.NewTime(r.before(epoch, 24*time.Hour))
	seed := fmt.Sprintf("%s-%s-%d", p.ProviderType, p.Region, r.between(1, 4))
	domain := name + ".kyma.ondemand.com"
	rotated := metav1.NewTime(r.after(created, 200*day))
	return gardencorev1beta1.ShootStatus{
		Conditions:          conditions(r, conditionTexts, lastReconcile),
		Constraints:         conditions(r, constraintTexts, lastReconcile),
		Gardener:            gardencorev1beta1.Gardener{ID: r.hex(64), Name: "gardenlet-" + r.alnum(10) + "-" + r.alnum(5), Version: "v1.131.0"},
		LastOperation:       &gardencorev1beta1.LastOperation{Description: "Shoot cluster has been successfully reconciled.", LastUpdateTime: lastReconcile, Progress: 100, State: gardencorev1beta1.LastOperationStateSucceeded, Type: gardencorev1beta1.LastOperationTypeReconcile},
		ObservedGeneration:  int64(r.between(2, 40)),
		RetryCycleStartTime: ptr(metav1.NewTime(lastReconcile.Add(-5 * time.Minute))),
		SeedName:            ptr(seed),
		TechnicalID:         technicalID,
		UID:                 uid,
		ClusterIdentity:     ptr(fmt.Sprintf("%s-%s-kyma", technicalID, uid)),
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{
			{Name: "external", URL: "https://api." + domain},
			{Name: "internal", URL: "https://api." + name + ".internal.kyma.ondemand.com"},
			{Name: "service-account-issuer", URL: "https://discovery.ingress.garden.kyma.ondemand.com/projects/kyma/shoots/" + string(uid) + "/issuer"},
		},
		Credentials: &gardencorev1beta1.ShootCredentials{Rotation: &gardencorev1beta1.ShootCredentialsRotation{
			CertificateAuthorities: &gardencorev1beta1.CARotation{Phase: gardencorev1beta1.RotationCompleted, LastInitiationTime: &rotated, LastCompletionTime: ptr(metav1.NewTime(rotated.Add(26 * time.Hour))), LastInitiationFinishedTime: ptr(metav1.NewTime(rotated.Add(20 * time.Minute)))},
			ServiceAccountKey:      &gardencorev1beta1.ServiceAccountKeyRotation{Phase: gardencorev1beta1.RotationCompleted, LastInitiationTime: &rotated, LastCompletionTime: ptr(metav1.NewTime(rotated.Add(26 * time.Hour))), LastInitiationFinishedTime: ptr(metav1.NewTime(rotated.Add(20 * time.Minute)))},
		}},
		LastMaintenance: &gardencorev1beta1.LastMaintenance{
			Description:   fmt.Sprintf("Machine image version of worker pool cpu-worker-0 updated to gardenlinux %s, reason: automatic update", gardenLinux),
			TriggeredTime: metav1.NewTime(r.before(epoch, 30*day)),
			State:         gardencorev1beta1.LastOperationStateSucceeded,
		},
		EncryptedResources: []string{"secrets", "configmaps.", "shoots.core.gardener.cloud"},
		Networking: &gardencorev1beta1.NetworkingStatus{
			Pods:        []string{"100.64.0.0/12"},
			Nodes:       []string{"10.250.0.0/16"},
			Services:    []string{"100.104.0.0/13"},
			EgressCIDRs: []string{fmt.Sprintf("3.%d.%d.%d/32", r.IntN(256), r.IntN(256), r.IntN(256)), fmt.Sprintf("18.%d.%d.%d/32", r.IntN(256), r.IntN(256), r.IntN(256))},
		},
	}
}

func conditions(r *random, texts []struct{ kind, reason, message string }, lastUpdate metav1.Time) []gardencorev1beta1.Condition {
	out := make([]gardencorev1beta1.Condition, 0, len(texts))
	for _, t := range texts {
		out = append(out, gardencorev1beta1.Condition{
			Type:               gardencorev1beta1.ConditionType(t.kind),
			Status:             gardencorev1beta1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(lastUpdate.Add(-time.Duration(r.IntN(90*24)) * time.Hour)),
			LastUpdateTime:     lastUpdate,
			Reason:             t.reason,
			Message:            t.message,
		})
	}
	return out
}
