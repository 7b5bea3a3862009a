package provisioning

import (
	"fmt"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// tenantSelector is the label selector KEB's resolve step lists a GA's
// bindings of the request's pool with (BuildForTenantMatching), or the
// shared pool's bindings when the request names no GA.
func (req Request) tenantSelector() string {
	s := schema.LabelHyperscalerType + "=" + req.HyperscalerType
	if req.EUAccess {
		s += "," + schema.LabelEUAccess + "=true"
	} else {
		s += ",!" + schema.LabelEUAccess
	}
	if req.GlobalAccountID == "" {
		return s + "," + schema.LabelShared + "=true"
	}
	return s + "," + schema.LabelShared + "!=true,!" + schema.LabelDirty + "," + schema.LabelTenantName + "=" + req.GlobalAccountID
}

// rejects says why KEB's selector for req (tenantSelector) would not return
// b, or what Gardener would refuse of a shoot on it; "" when b is fit. A
// label KEB requires absent must be absent whatever its value, and a label
// it requires "true" must be exactly that, as a label selector reads them.
func (req Request) rejects(b Binding) string {
	label := func(key string) (string, bool) { v, ok := b.Labels[key]; return v, ok }
	if v, _ := label(schema.LabelHyperscalerType); v != req.HyperscalerType {
		return fmt.Sprintf("its %s is %q, not %q", schema.LabelHyperscalerType, v, req.HyperscalerType)
	}
	if v, ok := label(schema.LabelEUAccess); req.EUAccess && v != "true" {
		return fmt.Sprintf("it is not in the EU access pool (%s %q)", schema.LabelEUAccess, v)
	} else if !req.EUAccess && ok {
		return fmt.Sprintf("it is in no pool outside EU access (%s %q)", schema.LabelEUAccess, v)
	}
	shared, _ := label(schema.LabelShared)
	if req.GlobalAccountID == "" {
		if shared != "true" {
			return fmt.Sprintf("it is not shared (%s %q)", schema.LabelShared, shared)
		}
	} else {
		if shared == "true" {
			return "it is shared"
		}
		if v, ok := label(schema.LabelDirty); ok {
			return fmt.Sprintf("it is marked %s (%q)", schema.LabelDirty, v)
		}
		if v, _ := label(schema.LabelTenantName); v != req.GlobalAccountID {
			return fmt.Sprintf("its %s is %q", schema.LabelTenantName, v)
		}
	}
	if req.ProviderType != "" && b.ProviderType != "" && b.ProviderType != req.ProviderType {
		return fmt.Sprintf("its provider is %q, the runtime's %q", b.ProviderType, req.ProviderType)
	}
	return ""
}
