package testbed

import _ "embed"

// KEBInstancesDDL creates KEB's instances table, the one the job reads. Every
// database made by NewDatabase already holds it.
//
//go:embed sql/keb_instances.sql
var KEBInstancesDDL string
