package rules

import (
	"fmt"
	"strings"
)

// Attribute names, the same on both sides of the arrow for PR and HR.
const (
	attrPlatformRegion    = "PR"
	attrHyperscalerRegion = "HR"
	attrShared            = "S"
	attrEUAccess          = "EU"
)

// blanks are the characters KEB deletes from an entry before reading it, inside
// names and values too (RemoveWhitespaces in KEB's rules/utils.go): "a ws"
// reads as "aws". Other space characters (a vertical tab, a no-break space)
// stay and become part of a name.
var blanks = strings.NewReplacer(" ", "", "\t", "", "\n", "", "\r", "", "\f", "")

// parseEntry reads one entry the way KEB's SimpleParser does: the same checks,
// in the same order, so that an entry KEB accepts is accepted here with the
// same meaning, however odd (aws(PR=x)y sets PR to "x)y", as in KEB). It
// returns why the entry is refused, in words for the operator, or "".
func parseEntry(index int, text string) (Rule, string) {
	r := Rule{Index: index, Text: text}
	sides := strings.Split(blanks.Replace(text), "->")
	if len(sides) > 2 {
		return r, `has more than one "->"; an entry is PLAN(inputs) -> outputs`
	}
	left := sides[0]
	planAndInputs := strings.Split(left, "(")
	switch {
	case len(planAndInputs) > 2:
		return r, `has more than one "(" before the "->"`
	case strings.Count(left, ")") > 1:
		return r, `has more than one ")" before the "->"`
	case strings.Contains(left, "(") != strings.Contains(left, ")"):
		return r, `has a "(" without ")" or a ")" without "(" before the "->"`
	}
	r.Plan = planAndInputs[0]
	if r.Plan == "" {
		return r, "names no plan; an entry starts with a plan such as aws or sap-converged-cloud"
	}
	if len(planAndInputs) == 2 {
		for _, attr := range strings.Split(strings.TrimSuffix(planAndInputs[1], ")"), ",") {
			if reason := r.setInput(attr); reason != "" {
				return r, reason
			}
		}
	}
	if len(sides) == 2 {
		for _, attr := range strings.Split(sides[1], ",") {
			if reason := r.setOutput(attr); reason != "" {
				return r, reason
			}
		}
	}
	return r, ""
}

// setInput reads one NAME=VALUE between the parentheses.
func (r *Rule) setInput(attr string) string {
	if attr == "" {
		// KEB also refuses "aws()", although its documentation shows it as
		// equal to "aws": the empty parentheses hold one empty attribute.
		return `has an empty input attribute: empty "()" or a stray ","; drop the parentheses or name PR=<region> or HR=<region>`
	}
	nameValue := strings.Split(attr, "=")
	if len(nameValue) != 2 {
		return fmt.Sprintf(`input attribute %q is not NAME=VALUE with one "="`, attr)
	}
	name, value := nameValue[0], nameValue[1]
	var field *string
	switch name {
	case attrPlatformRegion:
		field = &r.PlatformRegion
	case attrHyperscalerRegion:
		field = &r.HyperscalerRegion
	default:
		return fmt.Sprintf(`unknown input attribute %q; inputs are PR (platform region) and HR (hyperscaler region), in capitals`, name)
	}
	if *field != "" {
		return fmt.Sprintf("names the input %s twice", name)
	}
	if value == "" {
		return fmt.Sprintf("input %s has an empty value", name)
	}
	*field = value
	return ""
}

// setOutput reads one attribute after the arrow.
func (r *Rule) setOutput(attr string) string {
	var field *bool
	switch attr {
	case "":
		return `has an empty output attribute: nothing after "->" or a stray ","`
	case attrShared:
		field = &r.Shared
	case attrEUAccess:
		field = &r.EUAccess
	case attrPlatformRegion:
		field = &r.AppendPlatformRegion
	case attrHyperscalerRegion:
		field = &r.AppendHyperscalerRegion
	default:
		return fmt.Sprintf(`unknown output attribute %q; outputs are S (shared), EU (euAccess), PR and HR (append the region to hyperscalerType), without values`, attr)
	}
	if *field {
		return fmt.Sprintf("names the output %s twice", attr)
	}
	*field = true
	return ""
}
