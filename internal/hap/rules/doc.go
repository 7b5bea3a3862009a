// Package rules reads KEB's HAP rule (`hap.rule` in KEB's Helm values): the
// list of entries that decides, for each new runtime, which pool of
// credentials bindings KEB takes a binding from. It gives KEB's verdict on a
// list (Parse), the pool a runtime lands in (RuleSet.Match) and the pools each
// entry can name (RuleSet.Pools). Like package hap it does no I/O and reads no
// clock.
//
// # The language, as KEB evaluates it today
//
// An entry is
//
//	PLAN(PR=<platform region>, HR=<hyperscaler region>) -> S, EU, PR, HR
//
// where the parentheses and the arrow part are optional. The input attributes
// PR and HR only select runtimes: an entry applies to a runtime of its plan
// whose regions equal the values it names. The output attributes only shape
// the pool: S asks for shared bindings, EU for euAccess bindings, PR and HR
// append "_<platform region>" and "_<hyperscaler region>" of the runtime to
// the hyperscalerType, whose base is the provider type of the runtime (aws,
// azure, gcp, openstack, alicloud, gdch; see Providers.ProviderType). Of the
// entries that apply, the one naming more input attributes wins. A list is
// refused when an entry does not parse, repeats the inputs of another entry,
// or leaves a runtime to two equally specific entries (PR only and HR only of
// the same plan, without the entry naming both); when it is empty; and, at
// KEB's startup, when a plan KEB offers has no entry (Options.RequiredPlans).
// KEB also refuses a plan its PlanIDsMapping lacks; the job warns instead
// (RuleSet.Warnings), as it does for an input "*", which no real runtime
// meets.
//
// Sources in kyma-project/kyma-environment-broker: the grammar is
// common/hyperscaler/rules/simple_parser.go and the attribute setters beside
// it; validation and matching are rules_service.go (processAndValidate,
// MatchProvisioningAttributesWithValidRuleset) and ruleset.go (ValidRule,
// checkUniqueness, checkUnambiguity, checkPlans); the plan names are
// internal/broker/plans.go; the provider types are
// internal/provider/provider_values.go; the documentation is
// docs/contributor/03-11-hap-rules.md.
//
// # Where the older rule form differs
//
// Earlier KEB releases (and the earlier 03-11-hap-rules.md, and
// cmd/parser/rules/test-cases.yaml as written for them) read the same text
// differently:
//
//   - An input attribute alone appended its region: gcp(PR=cf-sa30) searched
//     the pool gcp_cf-sa30. Today it searches gcp; write
//     gcp(PR=cf-sa30) -> PR for gcp_cf-sa30. There were no PR or HR outputs.
//   - "*" was a wildcard that matched any region and appended it:
//     sap-converged-cloud(HR=*) -> S named openstack_<region>. Today KEB has
//     no wildcard: "*" is an ordinary value, so that entry applies only to a
//     runtime whose hyperscaler region is the text "*", which no real runtime
//     has. Today's form is sap-converged-cloud -> S, HR.
//   - Because of the wildcard, aws and aws(PR=*) counted as duplicates, and
//     aws(PR=*, HR=*) duplicated aws. Today they are different entries and
//     such lists are valid.
//
// A list written in the older form therefore usually still passes KEB's
// validation, but sends runtimes to other pools (or to none).
package rules
