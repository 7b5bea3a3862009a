package testbed

import _ "embed"

// KEBInstancesDDL creates the KEB tables the job reads: instances, and the
// operations and events the shadow job times a pick by. Every
// database made by NewDatabase already holds it.
//
//go:embed sql/keb_instances.sql
var KEBInstancesDDL string
