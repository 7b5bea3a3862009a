package landscape

import (
	"fmt"
)

// machineShape is what differs between providers in a shoot: machines,
// zones and the provider extension's configuration documents.
type machineShape struct {
	apiGroup     string
	machineTypes []string
	volumeType   string
	zones        func(region string) []string
	infra        func(r *random, zones []string) map[string]any
	controlPlane func(zones []string) map[string]any
	worker       func(r *random) map[string]any
}

var machineShapes = map[string]machineShape{
	"aws": {
		apiGroup:     "aws.provider.extensions.gardener.cloud/v1alpha1",
		machineTypes: []string{"m6i.large", "m6i.xlarge", "m6i.2xlarge", "m5.xlarge", "c7i.2xlarge"},
		volumeType:   "gp3",
		zones:        letteredZones,
		infra: func(r *random, zones []string) map[string]any {
			var zs []any
			for i, z := range zones {
				zs = append(zs, map[string]any{
					"name":     z,
					"workers":  fmt.Sprintf("10.250.%d.0/19", 32*i),
					"public":   fmt.Sprintf("10.250.%d.0/22", 96+4*i),
					"internal": fmt.Sprintf("10.250.%d.0/22", 112+4*i),
				})
			}
			return map[string]any{
				"networks":              map[string]any{"vpc": map[string]any{"cidr": "10.250.0.0/16"}, "zones": zs},
				"enableECRAccess":       true,
				"dualStack":             map[string]any{"enabled": false},
				"ignoreTags":            map[string]any{"keyPrefixes": []any{"kubernetes.io/cluster/", "sap:"}},
				"elasticFileSystem":     map[string]any{"enabled": r.chance(0.1)},
				"workersSecurityGroup":  "sg-" + r.hex(17),
				"instanceProfileSuffix": r.alnum(8),
			}
		},
		controlPlane: func([]string) map[string]any {
			return map[string]any{
				"cloudControllerManager": map[string]any{"useCustomRouteController": true},
				"loadBalancerController": map[string]any{"enabled": true, "ingressClassName": "alb"},
				"storage":                map[string]any{"managedDefaultClass": true},
			}
		},
		worker: func(r *random) map[string]any {
			return map[string]any{
				"instanceMetadataOptions": map[string]any{"httpTokens": "required", "httpPutResponseHopLimit": 2},
				"volume":                  map[string]any{"iops": 3000, "throughput": 125},
				"nodeTemplate": map[string]any{"capacity": map[string]any{
					"cpu": fmt.Sprint(2 << r.IntN(3)), "gpu": "0", "memory": fmt.Sprintf("%dGi", 8<<r.IntN(3)),
				}},
			}
		},
	},
	"azure": {
		apiGroup:     "azure.provider.extensions.gardener.cloud/v1alpha1",
		machineTypes: []string{"Standard_D2s_v5", "Standard_D4s_v5", "Standard_D8s_v5", "Standard_D4_v3"},
		volumeType:   "StandardSSD_LRS",
		zones:        func(string) []string { return []string{"1", "2", "3"} },
		infra: func(r *random, zones []string) map[string]any {
			var zs []any
			for i, z := range zones {
				zs = append(zs, map[string]any{
					"name": z,
					"cidr": fmt.Sprintf("10.250.%d.0/19", 32*i),
					"natGateway": map[string]any{
						"enabled": true, "idleConnectionTimeoutMinutes": 4,
						"ipAddresses": []any{map[string]any{"name": "pip-" + r.alnum(10), "resourceGroup": "shoot--kyma--" + r.alnum(7), "zone": z}},
					},
				})
			}
			return map[string]any{
				"networks": map[string]any{"vnet": map[string]any{"cidr": "10.250.0.0/16"}, "zones": zs},
				"zoned":    true,
			}
		},
		controlPlane: func([]string) map[string]any {
			return map[string]any{"cloudControllerManager": map[string]any{"featureGates": map[string]any{"CloudNodeLifecycleController": true}}}
		},
		worker: func(*random) map[string]any {
			return map[string]any{"diagnosticsProfile": map[string]any{"enabled": false}, "dataVolumes": []any{}}
		},
	},
	"gcp": {
		apiGroup:     "gcp.provider.extensions.gardener.cloud/v1alpha1",
		machineTypes: []string{"n2-standard-2", "n2-standard-4", "n2-standard-8", "c2d-highcpu-8"},
		volumeType:   "pd-balanced",
		zones:        letteredZones,
		infra: func(r *random, _ []string) map[string]any {
			return map[string]any{"networks": map[string]any{
				"workers":  "10.250.0.0/16",
				"cloudNAT": map[string]any{"minPortsPerVM": 2048, "enableEndpointIndependentMapping": false},
				"flowLogs": map[string]any{"aggregationInterval": "INTERVAL_5_SEC", "flowSampling": 0.5, "metadata": "INCLUDE_ALL_METADATA"},
			}}
		},
		controlPlane: func(zones []string) map[string]any { return map[string]any{"zone": zones[0]} },
		worker: func(*random) map[string]any {
			return map[string]any{"gpu": map[string]any{"acceleratorType": "", "count": 0}, "volume": map[string]any{"localSSDInterface": "NVME"}}
		},
	},
	"openstack": {
		apiGroup:     "openstack.provider.extensions.gardener.cloud/v1alpha1",
		machineTypes: []string{"g_c4_m16", "g_c8_m32", "g_c16_m64"},
		volumeType:   "",
		zones:        letteredZones,
		infra: func(r *random, _ []string) map[string]any {
			return map[string]any{
				"floatingPoolName": "FloatingIP-external-kyma-01",
				"networks":         map[string]any{"workers": "10.250.0.0/16", "router": map[string]any{"id": r.uuid()}},
			}
		},
		controlPlane: func([]string) map[string]any { return map[string]any{"loadBalancerProvider": "f5"} },
		worker: func(r *random) map[string]any {
			return map[string]any{"serverGroup": map[string]any{"policy": "soft-anti-affinity"}, "imageID": r.uuid()}
		},
	},
}

func letteredZones(region string) []string { return []string{region + "a", region + "b", region + "c"} }

func shapeFor(providerType string) machineShape {
	if s, ok := machineShapes[providerType]; ok {
		return s
	}
	return machineShapes["aws"]
}

// typed adds the apiVersion and kind a provider config document carries.
func typed(apiGroup, kind string, doc map[string]any) map[string]any {
	doc["apiVersion"] = apiGroup
	doc["kind"] = kind
	return doc
}
