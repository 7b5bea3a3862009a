// Package jobstest holds in-memory fakes of the jobs' ports: the Gardener
// API (jobs.Gardener), the run lock (jobs.Locker), and a store that serves
// every job's port (jobs.Store: the compiler holds the fake to it, as it
// holds the real adapters, so a job added later does not build until the
// fake serves its port too), so that each job's decide-then-act path can be
// tested in milliseconds, under `go test -short`. They keep the contracts
// the ports' comments state (optimistic concurrency on labels, findings
// that open and resolve, release intents settled by later rows) and
// nothing more. What only the
// real systems can show (paging, watches, SQL, locks, races, crashes) stays
// tested against the real test bed.
package jobstest
