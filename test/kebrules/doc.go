// Package kebrules states KEB's choice of a CredentialsBinding on KEB's own
// terms, independently of the job's code, for the tests that compare the
// job with KEB (test/parity, test/differential): KEB's label selectors
// (internal/subscriptions/label_selector.go) sent to the API server, KEB's
// per-binding count (GetInstanceCountPerBinding in
// internal/storage/postsql/read.go) sent to PostgreSQL, and KEB's decisions
// written out: IsGlobalAccountAllowed and LimitForProvider
// (common/hyperscaler/multiaccount/config.go), the guard and
// selectBindingBelowLimit of resolveWithMultiAccountSupport
// (internal/process/provisioning/resolve_credentials_binding.go) and
// GetLeastUsedCredentialsBindingFromSecretBindings
// (common/gardener/client.go). Each rule is stated here once.
package kebrules
