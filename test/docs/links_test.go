// Package docs_test checks the project's Markdown: every relative link of
// README.md, CHANGELOG.md and docs/*.md names a file that exists and, with
// a #fragment, a heading that file has.
package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const root = "../.."

// link matches an inline Markdown link or image, [text](target); the
// target ends at the first space or closing parenthesis.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestRelativeLinksResolve(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md")}, docs...)
	for _, file := range files {
		name, _ := filepath.Rel(root, file)
		for _, l := range links(t, file) {
			if problem := check(file, l.target); problem != "" {
				t.Errorf("%s:%d: link %q: %s", name, l.line, l.target, problem)
			}
		}
	}
}

type mdLink struct {
	line   int
	target string
}

// links returns the links of file outside fenced code blocks and inline
// code spans.
func links(t *testing.T, file string) []mdLink {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mdLink
	fenced := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(withoutCodeSpans(line), -1) {
			out = append(out, mdLink{line: n, target: m[1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var codeSpan = regexp.MustCompile("`[^`]*`")

func withoutCodeSpans(line string) string { return codeSpan.ReplaceAllString(line, "") }

// check returns what is wrong with target as a link of file, or "".
// Absolute URLs are not followed: the tests run without a network.
func check(file, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, fragment, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), path)
		if _, err := os.Stat(dest); err != nil {
			return "no such file"
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	anchors, err := headingAnchors(dest)
	if err != nil {
		return err.Error()
	}
	if !anchors[fragment] {
		return "no heading with that anchor in " + filepath.Base(dest)
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lower case, letters, digits, '-' and '_' kept, spaces
// made '-', everything else dropped; a repeated anchor gets -1, -2, ...
func headingAnchors(file string) (map[string]bool, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			anchors[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[anchor] = true
		}
		seen[anchor]++
	}
	return anchors, nil
}
