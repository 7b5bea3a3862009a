package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/internal/report"
)

// The output formats of the commands that print rows, as kubectl spells them.
const (
	outputTable = "table"
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

var rowFormats = []string{outputTable, outputWide, outputJSON, outputYAML}

// outputFlags are -o and --no-headers of a command that prints rows.
type outputFlags struct {
	format    string
	noHeaders bool
	formats   []string
}

// registerOutput adds -o (one of formats, the first the default) to cmd,
// and --no-headers when a table is among them.
func registerOutput(cmd *cobra.Command, formats ...string) *outputFlags {
	o := &outputFlags{formats: formats}
	cmd.Flags().StringVarP(&o.format, "output", "o", formats[0], "output format: "+strings.Join(formats, ", "))
	completeValues(cmd, "output", formats...)
	if slices.Contains(formats, outputTable) {
		cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print table rows only: no header line, no titles or notes (-o table or wide)")
	}
	return o
}

// check refuses a format the command does not print, before anything runs.
func (o *outputFlags) check() error {
	if !slices.Contains(o.formats, o.format) {
		return usageError{fmt.Errorf("-o: %q is not one of %s", o.format, strings.Join(o.formats, ", "))}
	}
	return nil
}

// structured is whether v is printed as data (JSON or YAML) rather than as
// a table.
func (o *outputFlags) structured() bool { return o.format == outputJSON || o.format == outputYAML }

func (o *outputFlags) layout() report.Layout {
	return report.Layout{Wide: o.format == outputWide, NoHeaders: o.noHeaders}
}

// print writes v as JSON or YAML, else through table with the layout the
// flags ask for.
func (o *outputFlags) print(out io.Writer, v any, table func(io.Writer, report.Layout) error) error {
	if o.structured() {
		return writeData(out, o.format, v)
	}
	return table(out, o.layout())
}

// writeData writes v as indented JSON or as YAML; YAML is made from the
// JSON, so both carry the same keys.
func writeData(out io.Writer, format string, v any) error {
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // rules read "->"
	if err := enc.Encode(v); err != nil {
		return err
	}
	if format == outputJSON {
		_, err := out.Write(js.Bytes())
		return err
	}
	y, err := yaml.JSONToYAML(js.Bytes())
	if err != nil {
		return err
	}
	_, err = out.Write(y)
	return err
}
