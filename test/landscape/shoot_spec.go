package landscape

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

const (
	shootToleration   = "kyma-project.io/shoots"
	kubernetesVersion = "1.32.6"
	gardenLinux       = "1592.9.0"
)

// shootObject builds a shoot shaped like the ones KEB creates, with the
// status Gardener keeps on them: about 12 KB of JSON, which the API server
// serves as about 17 KB with the managedFields it adds, like production.
func (l *Landscape) shootObject(spec ShootSpec, p PoolProfile) *gardencorev1beta1.Shoot {
	r := l.rng
	created := r.before(epoch, 400*day)
	shape := shapeFor(p.ProviderType)
	zones := shape.zones(p.Region)
	s := &gardencorev1beta1.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: shootMeta(r, spec, p, created),
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfile: &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: p.ProviderType},
			DNS: &gardencorev1beta1.DNS{
				Domain: ptr(spec.Name + ".kyma.ondemand.com"),
				Providers: []gardencorev1beta1.DNSProvider{{
					Type:       ptr("aws-route53"),
					SecretName: ptr("route53-secret"),
					Primary:    ptr(true),
					Domains:    &gardencorev1beta1.DNSIncludeExclude{Include: []string{spec.Name + ".kyma.ondemand.com"}, Exclude: []string{"internal." + spec.Name + ".kyma.ondemand.com"}},
					Zones:      &gardencorev1beta1.DNSIncludeExclude{Include: []string{"Z" + strings.ToUpper(r.alnum(20))}},
				}},
			},
			SeedSelector: &gardencorev1beta1.SeedSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"seed.gardener.cloud/eu-access": fmt.Sprint(spec.Pool.EUAccess)}},
				ProviderTypes: []string{p.ProviderType},
			},
			Tolerations: []gardencorev1beta1.Toleration{{Key: shootToleration}},
			Extensions:  shootExtensions(spec.Name),
			Kubernetes:  shootKubernetes(r),
			Networking:  shootNetworking(),
			Maintenance: shootMaintenance(r),
			Provider: gardencorev1beta1.Provider{
				Type:                 p.ProviderType,
				InfrastructureConfig: raw(typed(shape.apiGroup, "InfrastructureConfig", shape.infra(r, zones))),
				ControlPlaneConfig:   raw(typed(shape.apiGroup, "ControlPlaneConfig", shape.controlPlane(zones))),
				Workers:              shootWorkers(r, shape, zones),
				WorkersSettings:      &gardencorev1beta1.WorkersSettings{SSHAccess: &gardencorev1beta1.SSHAccess{Enabled: false}},
			},
			Hibernation:      shootHibernation(r),
			Purpose:          ptr(gardencorev1beta1.ShootPurpose(pick(r, []string{"production", "evaluation", "development"}))),
			Region:           p.Region,
			SeedName:         ptr(fmt.Sprintf("%s-%s-%d", p.ProviderType, p.Region, r.between(1, 4))),
			SystemComponents: &gardencorev1beta1.SystemComponents{NodeLocalDNS: &gardencorev1beta1.NodeLocalDNS{Enabled: true}},
			ControlPlane: &gardencorev1beta1.ControlPlane{HighAvailability: &gardencorev1beta1.HighAvailability{
				FailureTolerance: gardencorev1beta1.FailureTolerance{Type: gardencorev1beta1.FailureToleranceTypeZone},
			}},
			Resources: []gardencorev1beta1.NamedResourceReference{{
				Name:        "kyma-oidc-ca",
				ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: "oidc-ca-" + spec.Name},
			}},
		},
		Status: shootStatus(r, spec.Name, p, created),
	}
	switch {
	case spec.BindingName == "":
		makeWorkerless(s)
	case spec.Legacy:
		s.Spec.SecretBindingName = ptr(spec.BindingName)
	default:
		s.Spec.CredentialsBindingName = ptr(spec.BindingName)
	}
	if spec.Pool.EUAccess {
		s.Spec.AccessRestrictions = []gardencorev1beta1.AccessRestrictionWithOptions{{
			AccessRestriction: gardencorev1beta1.AccessRestriction{Name: "eu-access-only"},
			Options:           map[string]string{"support.gardener.cloud/eu-access-for-cluster-addons": "false", "support.gardener.cloud/eu-access-for-cluster-nodes": "true"},
		}}
	}
	return s
}

func shootMeta(r *random, spec ShootSpec, p PoolProfile, created time.Time) metav1.ObjectMeta {
	labels := map[string]string{
		"account":                                                 spec.GlobalAccountID,
		"subaccount":                                              spec.SubAccountID,
		"kyma-project.io/global-account-id":                       spec.GlobalAccountID,
		"kyma-project.io/subaccount-id":                           spec.SubAccountID,
		"kyma-project.io/shoot-name":                              spec.Name,
		"kyma-project.io/region":                                  p.Region,
		"kyma-project.io/broker-plan-name":                        p.Plan,
		"kyma-project.io/platform-region":                         pick(r, []string{"cf-eu10", "cf-eu11", "cf-us10", "cf-ap21"}),
		"name":                                                    spec.Name,
		"networking.shoot.gardener.cloud/provider":                "calico",
		"networking.extensions.gardener.cloud/calico":             "true",
		"provider.shoot.gardener.cloud/" + p.ProviderType:         "true",
		"provider.extensions.gardener.cloud/" + p.ProviderType:    "true",
		"extensions.extensions.gardener.cloud/shoot-dns-service":  "true",
		"extensions.extensions.gardener.cloud/shoot-cert-service": "true",
		"extensions.extensions.gardener.cloud/shoot-oidc-service": "true",
		"shoot.gardener.cloud/status":                             "healthy",
		"seed.gardener.cloud/" + p.ProviderType + "-" + p.Region:  "true",
	}
	if spec.RuntimeID != "" {
		labels[hap.LabelRuntimeID] = spec.RuntimeID
	}
	annotations := map[string]string{
		"gardener.cloud/created-by":                          "kyma-infrastructure-manager",
		"infrastructuremanager.kyma-project.io/runtime-id":   spec.RuntimeID,
		"infrastructuremanager.kyma-project.io/licence-type": pick(r, []string{"CUSTOMER", "PARTNER", "SAPDEV"}),
		"authentication.gardener.cloud/issuer":               "managed",
		"dns.gardener.cloud/dnsnames":                        "*",
		"shoot.gardener.cloud/tasks":                         "deployInfrastructure,deployDNSRecordInternal",
		"gardener.cloud/timestamp":                           created.Add(time.Duration(r.IntN(1000)) * time.Hour).Format(time.RFC3339Nano),
		"support.gardener.cloud/description":                 fmt.Sprintf("Kyma runtime %s of global account %s", spec.RuntimeID, spec.GlobalAccountID),
	}
	return metav1.ObjectMeta{
		Name:              spec.Name,
		Labels:            labels,
		Annotations:       annotations,
		CreationTimestamp: metav1.NewTime(created),
		Generation:        int64(r.between(2, 40)),
	}
}

func shootExtensions(name string) []gardencorev1beta1.Extension {
	return []gardencorev1beta1.Extension{
		{Type: "shoot-dns-service", ProviderConfig: raw(typed("service.dns.extensions.gardener.cloud/v1alpha1", "DNSConfig", map[string]any{
			"dnsProviderReplication":        map[string]any{"enabled": true},
			"syncProvidersFromShootSpecDNS": true,
			"providers": []any{map[string]any{
				"type": "aws-route53", "secretName": "route53-secret", "primary": true,
				"domains": map[string]any{"include": []any{name + ".kyma.ondemand.com"}},
			}},
		}))},
		{Type: "shoot-cert-service", ProviderConfig: raw(typed("service.cert.extensions.gardener.cloud/v1alpha1", "CertConfig", map[string]any{
			"shootIssuers": map[string]any{"enabled": true},
			"issuers": []any{map[string]any{
				"name": "kyma-letsencrypt", "email": "kyma-certificates@example.com",
				"server": "https://acme-v02.api.letsencrypt.org/directory",
			}},
		}))},
		{Type: "shoot-oidc-service"},
		{Type: "shoot-networking-problemdetector"},
		{Type: "shoot-lakom-service"},
		{Type: "shoot-networking-filter", Disabled: ptr(true)},
	}
}

func shootKubernetes(r *random) gardencorev1beta1.Kubernetes {
	return gardencorev1beta1.Kubernetes{
		Version: kubernetesVersion,
		KubeAPIServer: &gardencorev1beta1.KubeAPIServerConfig{
			OIDCConfig: &gardencorev1beta1.OIDCConfig{
				ClientID:       ptr(r.uuid()),
				IssuerURL:      ptr("https://kyma.accounts.ondemand.com"),
				GroupsClaim:    ptr("groups"),
				UsernameClaim:  ptr("sub"),
				UsernamePrefix: ptr("-"),
				SigningAlgs:    []string{"RS256"},
			},
			AuditConfig: &gardencorev1beta1.AuditConfig{AuditPolicy: &gardencorev1beta1.AuditPolicy{
				ConfigMapRef: &corev1.ObjectReference{Name: "audit-policy"},
			}},
			EnableAnonymousAuthentication: ptr(false),
			Requests:                      &gardencorev1beta1.APIServerRequests{MaxNonMutatingInflight: ptr(int32(400)), MaxMutatingInflight: ptr(int32(200))},
			AdmissionPlugins: []gardencorev1beta1.AdmissionPlugin{
				{Name: "EventRateLimit", Disabled: ptr(true)},
				{Name: "PodSecurity"},
			},
		},
		KubeControllerManager: &gardencorev1beta1.KubeControllerManagerConfig{
			NodeCIDRMaskSize:       ptr(int32(24)),
			NodeMonitorGracePeriod: &metav1.Duration{Duration: 40 * time.Second},
		},
		KubeScheduler: &gardencorev1beta1.KubeSchedulerConfig{Profile: ptr(gardencorev1beta1.SchedulingProfileBalanced)},
		KubeProxy:     &gardencorev1beta1.KubeProxyConfig{Mode: ptr(gardencorev1beta1.ProxyModeIPTables), Enabled: ptr(true)},
		Kubelet:       kubeletConfig(),
		ClusterAutoscaler: &gardencorev1beta1.ClusterAutoscaler{
			ScaleDownDelayAfterAdd:        &metav1.Duration{Duration: time.Hour},
			ScaleDownUnneededTime:         &metav1.Duration{Duration: 30 * time.Minute},
			ScaleDownUtilizationThreshold: ptr(0.5),
			Expander:                      ptr(gardencorev1beta1.ClusterAutoscalerExpanderLeastWaste),
		},
		VerticalPodAutoscaler: &gardencorev1beta1.VerticalPodAutoscaler{
			Enabled:                true,
			EvictAfterOOMThreshold: &metav1.Duration{Duration: 10 * time.Minute},
			UpdaterInterval:        &metav1.Duration{Duration: time.Minute},
		},
	}
}

func kubeletConfig() *gardencorev1beta1.KubeletConfig {
	return &gardencorev1beta1.KubeletConfig{
		FailSwapOn:                  ptr(true),
		MaxPods:                     ptr(int32(110)),
		PodPIDsLimit:                ptr(int64(4096)),
		ImageGCHighThresholdPercent: ptr(int32(50)),
		ImageGCLowThresholdPercent:  ptr(int32(40)),
		SerializeImagePulls:         ptr(true),
		ContainerLogMaxSize:         ptr(resource.MustParse("100Mi")),
		ContainerLogMaxFiles:        ptr(int32(5)),
		EvictionHard: &gardencorev1beta1.KubeletConfigEviction{
			MemoryAvailable: ptr("100Mi"), ImageFSAvailable: ptr("5%"), ImageFSInodesFree: ptr("5%"),
			NodeFSAvailable: ptr("5%"), NodeFSInodesFree: ptr("5%"),
		},
		KubeReserved: &gardencorev1beta1.KubeletConfigReserved{
			CPU: ptr(resource.MustParse("80m")), Memory: ptr(resource.MustParse("1Gi")), PID: ptr(resource.MustParse("20k")),
		},
	}
}

// shootHibernation gives some shoots the evening hibernation schedule users
// of evaluation clusters set.
func shootHibernation(r *random) *gardencorev1beta1.Hibernation {
	if !r.chance(0.3) {
		return nil
	}
	return &gardencorev1beta1.Hibernation{Enabled: ptr(false), Schedules: []gardencorev1beta1.HibernationSchedule{
		{Start: ptr("00 20 * * 1,2,3,4,5"), End: ptr("00 07 * * 1,2,3,4,5"), Location: ptr("Europe/Berlin")},
	}}
}

func shootNetworking() *gardencorev1beta1.Networking {
	return &gardencorev1beta1.Networking{
		Type:     ptr("calico"),
		Pods:     ptr("100.64.0.0/12"),
		Nodes:    ptr("10.250.0.0/16"),
		Services: ptr("100.104.0.0/13"),
		ProviderConfig: raw(typed("calico.networking.extensions.gardener.cloud/v1alpha1", "NetworkConfig", map[string]any{
			"backend": "none", "ipv4": map[string]any{"mode": "Never", "pool": "vxlan", "autoDetectionMethod": "interface=eth0"},
			"overlay": map[string]any{"enabled": false, "createPodRoutes": true}, "snatToUpstreamDNS": map[string]any{"enabled": true},
			"typha": map[string]any{"enabled": true},
		})),
		IPFamilies: []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4},
	}
}

func shootMaintenance(r *random) *gardencorev1beta1.Maintenance {
	begin := r.between(0, 22)
	return &gardencorev1beta1.Maintenance{
		AutoUpdate: &gardencorev1beta1.MaintenanceAutoUpdate{KubernetesVersion: true, MachineImageVersion: ptr(true)},
		TimeWindow: &gardencorev1beta1.MaintenanceTimeWindow{
			Begin: fmt.Sprintf("%02d0000+0000", begin),
			End:   fmt.Sprintf("%02d0000+0000", begin+1),
		},
		ConfineSpecUpdateRollout: ptr(false),
	}
}

func shootWorkers(r *random, shape machineShape, zones []string) []gardencorev1beta1.Worker {
	n := r.between(1, 3)
	workers := make([]gardencorev1beta1.Worker, 0, n)
	for i := range n {
		name := "cpu-worker-0"
		if i > 0 {
			name = fmt.Sprintf("pool-%s", r.alnum(5))
		}
		w := gardencorev1beta1.Worker{
			Name: name,
			Machine: gardencorev1beta1.Machine{
				Type:         pick(r, shape.machineTypes),
				Image:        &gardencorev1beta1.ShootMachineImage{Name: "gardenlinux", Version: ptr(gardenLinux)},
				Architecture: ptr("amd64"),
			},
			Minimum:          int32(r.between(1, 3)),
			Maximum:          int32(r.between(3, 20)),
			MaxSurge:         ptr(intstr.FromInt32(int32(len(zones)))),
			MaxUnavailable:   ptr(intstr.FromInt32(0)),
			Zones:            zones,
			CRI:              &gardencorev1beta1.CRI{Name: gardencorev1beta1.CRINameContainerD},
			Labels:           map[string]string{"worker.gardener.cloud/pool": name, "kyma-project.io/worker-pool": name},
			ProviderConfig:   raw(typed(shape.apiGroup, "WorkerConfig", shape.worker(r))),
			SystemComponents: &gardencorev1beta1.WorkerSystemComponents{Allow: i == 0},
			MachineControllerManagerSettings: &gardencorev1beta1.MachineControllerManagerSettings{
				MachineDrainTimeout:    &metav1.Duration{Duration: 2 * time.Hour},
				MachineHealthTimeout:   &metav1.Duration{Duration: 10 * time.Minute},
				MachineCreationTimeout: &metav1.Duration{Duration: 20 * time.Minute},
			},
			Kubernetes: &gardencorev1beta1.WorkerKubernetes{Version: ptr(kubernetesVersion)},
		}
		if shape.volumeType != "" {
			w.Volume = &gardencorev1beta1.Volume{Type: ptr(shape.volumeType), VolumeSize: fmt.Sprintf("%dGi", 50+10*r.IntN(10))}
		}
		if i > 0 {
			w.Taints = []corev1.Taint{{Key: "kyma-project.io/dedicated", Value: name, Effect: corev1.TaintEffectNoSchedule}}
		}
		workers = append(workers, w)
	}
	return workers
}

func ptr[T any](v T) *T { return &v }

// raw encodes a provider config document; they hold only JSON-safe values.
func raw(doc map[string]any) *runtime.RawExtension {
	data, _ := json.Marshal(doc)
	return &runtime.RawExtension{Raw: data}
}

// makeWorkerless turns s into a shoot without workers, the one kind of
// shoot Gardener admits without credentials: it names no binding, and
// Gardener forbids every field that configures nodes or their network.
func makeWorkerless(s *gardencorev1beta1.Shoot) {
	s.Spec.Provider = gardencorev1beta1.Provider{Type: s.Spec.Provider.Type}
	s.Spec.Networking = nil
	s.Spec.SystemComponents = nil
	s.Spec.Kubernetes = gardencorev1beta1.Kubernetes{Version: s.Spec.Kubernetes.Version}
	if s.Spec.Maintenance != nil && s.Spec.Maintenance.AutoUpdate != nil {
		s.Spec.Maintenance.AutoUpdate.MachineImageVersion = nil
	}
}
