// Package reliability holds tests only: it proves on the real test bed
// (kube-apiserver with the Gardener kinds, PostgreSQL) that hap-reconciler
// is safe under bad input, faults, races and crashes, and that it runs with
// the least-privileged database role without ever showing a password.
//
// The randomized parts run a few trials by default; `make reliability`
// runs the long version (see docs/invariants.md).
package reliability
