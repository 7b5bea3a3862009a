// Package exportfile is Gardener read from kubectl exports
// (--gardener-file): the shoots and credentials bindings of one project
// namespace as `kubectl get shoots,credentialsbindings -o json` (or -o yaml)
// wrote them. Source is the jobs' Gardener port, as the API client is; it
// decodes through internal/gardener/wire, so an export reads exactly as
// the API would have, and it refuses every write.
//
// It is a package of its own because it shares nothing with the API client
// but the decoding: no request, retry or cache. Its failures are the
// export's (a file that cannot be read whole, a binding not in it, a write
// refused) and say so themselves; none is a setup problem of a system, so
// none carries a hint.
//
// Files: source.go is the Source and the port's methods; read.go reads the
// shapes kubectl writes (a List, single objects, a JSON stream, YAML
// documents).
package exportfile
