// Package jobstest holds in-memory fakes of the jobs' ports: the Gardener
// API (jobs.Gardener), the run lock (jobs.Locker), and a store that serves
// what every run reads (jobs.Store) and the ports the five jobs it was
// written for declare (internal/jobs' fakedJobs), so that each of their
// decide-then-act paths can be tested in milliseconds, under
// `go test -short`. They keep the contracts the ports' comments state
// (optimistic concurrency on labels, findings that open and resolve,
// release intents settled by later rows) and nothing more. What only the
// real systems can show (paging, watches, SQL, locks, races, crashes) stays
// tested against the real test bed, and so does a job added later until
// the store here is given its port.
package jobstest
