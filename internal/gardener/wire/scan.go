package wire

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// scanner reads Gardener's JSON as it streams in: it decodes the few members
// a decision reads and skips everything else with a byte loop.
//
// A page of 500 shoots is about 9 MB of JSON of which a decision reads a few
// hundred bytes per shoot. A general decoder checks the grammar of every
// skipped byte, and at 100,000 shoots that was the client's largest cost,
// about as much as decompressing the pages. Skipping here checks what keeps
// the read honest: strings end, brackets nest and match, the stream does not
// end early (io.ErrUnexpectedEOF, which the caller repeats as a broken
// connection). Inside a skipped value it does not check commas, colons,
// control characters in strings or the spelling of numbers and literals:
// the API server wrote them with a
// JSON encoder and TLS delivered them intact. Every value a decision reads
// is checked in full: its type, its escapes (unquoted by jsontext) and its
// UTF-8.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unconsumed byte of buf
	end  int   // buf[:end] holds what was read so far
	base int64 // stream offset of buf[0], for error messages
	rerr error // the reader's last error; io.EOF once it is drained

	// names holds a copy of the member name being decoded at each depth
	// of object: the buffer may move while its value is read.
	names [][]byte
	depth int
	// unquoted holds the last string that had escapes, unquoted.
	unquoted []byte
	// open holds the brackets open while skipping a value.
	open []byte
	// interned holds the strings intern returned.
	interned interner
}

const scanBufferSize = 32 << 10

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, scanBufferSize)}
}

// fill reads more of the stream, keeping buf[from:end] (moved to the front,
// so pos and any kept index drop by from), and reports whether anything new
// arrived.
func (s *scanner) fill(from int) bool {
	if from > 0 {
		s.end = copy(s.buf, s.buf[from:s.end])
		s.pos -= from
		s.base += int64(from)
	}
	if s.end == len(s.buf) { // one token fills the buffer: grow it
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for s.rerr == nil {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		s.rerr = err
		if n > 0 {
			return true
		}
	}
	return false
}

// ended is the error for a stream that stopped before the JSON did: the
// reader's own error when it failed, else io.ErrUnexpectedEOF.
func (s *scanner) ended() error {
	if s.rerr != nil && !errors.Is(s.rerr, io.EOF) {
		return s.rerr
	}
	return fmt.Errorf("JSON ends early, after %d bytes: %w", s.base+int64(s.end), io.ErrUnexpectedEOF)
}

func (s *scanner) syntaxError(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.base+int64(s.pos), fmt.Sprintf(format, args...))
}

// peek returns the next byte that is not white space, unconsumed.
func (s *scanner) peek() (byte, error) {
	for {
		for ; s.pos < s.end; s.pos++ {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
			default:
				return c, nil
			}
		}
		if !s.fill(s.pos) {
			return 0, s.ended()
		}
	}
}

// consume reads the byte want, after any white space.
func (s *scanner) consume(want byte) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c != want {
		return s.syntaxError("found %q, want %q", c, want)
	}
	s.pos++
	return nil
}

// finish checks that nothing but white space follows the value just read.
func (s *scanner) finish() error {
	c, err := s.peek()
	if err == nil {
		return s.syntaxError("found %q after the end of the value", c)
	}
	if s.rerr != nil && !errors.Is(s.rerr, io.EOF) {
		return s.rerr
	}
	return nil
}

// kindAt names the JSON kind that starts with c, for errors.
func kindAt(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// null reads the literal null, which the caller peeked at.
func (s *scanner) null() error {
	for len("null") > s.end-s.pos {
		if !s.fill(s.pos) {
			return s.ended()
		}
	}
	if string(s.buf[s.pos:s.pos+4]) != "null" {
		return s.syntaxError("found %q, want null", s.buf[s.pos:s.pos+4])
	}
	s.pos += 4
	return nil
}

// object reads an object, calling member with each member's name; member
// must read the value (skip it, at least). null reads as an empty object.
// field names the object in errors.
func (s *scanner) object(field string, member func(name []byte) error) error {
	if len(s.names) == s.depth {
		s.names = append(s.names, nil)
	}
	s.depth++
	defer func() { s.depth-- }()
	return s.sequence(field, '{', '}', "an object", func() error {
		raw, err := s.rawString(field, "a member name")
		if err != nil {
			return err
		}
		name := append(s.names[s.depth-1][:0], raw...)
		s.names[s.depth-1] = name
		if err := s.consume(':'); err != nil {
			return err
		}
		return member(name)
	})
}

// array reads an array, calling elem for each element; elem must read it.
// null reads as an empty array.
func (s *scanner) array(field string, elem func() error) error {
	return s.sequence(field, '[', ']', "an array", elem)
}

// sequence reads what open and close enclose, elements separated by commas,
// calling elem for each; null reads as an empty sequence.
func (s *scanner) sequence(field string, open, close byte, want string, elem func() error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch c {
	case 'n':
		return s.null()
	case open:
		s.pos++
	default:
		return fmt.Errorf("%s: found %s, want %s", field, kindAt(c), want)
	}
	if c, err = s.peek(); err != nil {
		return err
	}
	if c == close {
		s.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if c, err = s.peek(); err != nil {
			return err
		}
		switch c {
		case close:
			s.pos++
			return nil
		case ',':
			s.pos++
		default:
			return s.syntaxError("found %q in %s, want ',' or %q", c, field, close)
		}
	}
}

// rawString reads a string and returns its unquoted bytes, valid until the
// next read. field and what (the string's role in field) name it in errors.
func (s *scanner) rawString(field, what string) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, fmt.Errorf("%s: found %s, want %s", field, kindAt(c), what)
	}
	start, escaped, afterBackslash := s.pos, false, false
	for i := start + 1; ; i++ {
		if i == s.end {
			if !s.fill(start) {
				return nil, s.ended()
			}
			i -= start
			start = 0
		}
		c := s.buf[i]
		switch {
		case afterBackslash:
			afterBackslash = false
		case c == '\\':
			escaped, afterBackslash = true, true
		case c == '"':
			s.pos = i + 1
			if escaped {
				if s.unquoted, err = jsontext.AppendUnquote(s.unquoted[:0], s.buf[start:i+1]); err != nil {
					return nil, fmt.Errorf("%s: %s: %w", field, what, err)
				}
				return s.unquoted, nil
			}
			raw := s.buf[start+1 : i]
			if !utf8.Valid(raw) {
				return nil, fmt.Errorf("%s: %s is not valid UTF-8", field, what)
			}
			return raw, nil
		case c < ' ':
			s.pos = i
			return nil, s.syntaxError("control character %#x in a string", c)
		}
	}
}

// strOrNull reads a string into v, or null as "".
func (s *scanner) strOrNull(field string, v *string) error {
	raw, err := s.rawStringOrNull(field, "a string")
	if err == nil {
		*v = string(raw)
	}
	return err
}

// rawStringOrNull is rawString that reads null as an empty string.
func (s *scanner) rawStringOrNull(field, what string) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c == 'n' {
		return nil, s.null()
	}
	return s.rawString(field, what)
}

// intern returns raw as a string, the same string each time the same bytes
// come again in this scanner's stream.
func (s *scanner) intern(raw []byte) string { return s.interned.intern(raw) }

// interner hands out one string for equal bytes: a page of bindings repeats
// a few label keys and values hundreds of times, and a run keeps every
// binding's labels.
type interner struct{ strings map[string]string }

func (in *interner) intern(raw []byte) string {
	if v, ok := in.strings[string(raw)]; ok {
		return v
	}
	if in.strings == nil {
		in.strings = make(map[string]string)
	}
	v := string(raw)
	in.strings[v] = v
	return v
}

// skip reads one value of any kind and drops it.
func (s *scanner) skip() error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '"', '{', '[':
		return s.skipNested()
	case ',', ':', '}', ']':
		return s.syntaxError("found %q, want a value", c)
	}
	return s.skipLiteral()
}

// structural marks the bytes skipNested stops at outside strings.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// skipNested skips a string, an object or an array: the hot loop of a list.
// It runs through the bytes that mean nothing to it in tight loops and
// follows strings and brackets, nothing else.
func (s *scanner) skipNested() error {
	open := s.open[:0]
	defer func() { s.open = open }()
	i, inString, afterBackslash := s.pos, false, false
	for {
		if i == s.end {
			s.pos = i
			if !s.fill(i) {
				return s.ended()
			}
			i = s.pos
		}
		rest := s.buf[i:s.end]
		if inString {
			n, ended, escaped := stringStep(rest, afterBackslash)
			i, afterBackslash = i+n, escaped
			if ended {
				inString = false
				if len(open) == 0 { // a string on its own
					s.pos = i
					return nil
				}
			}
			continue
		}
		k := toStructural(rest)
		i += k
		if k == len(rest) {
			continue
		}
		c := rest[k]
		i++
		switch c {
		case '"':
			inString = true
		case '{', '[':
			open = append(open, c)
		default: // '}' or ']'
			if !closes(open, c) {
				s.pos = i - 1
				return s.syntaxError("found %q that closes nothing open", c)
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				s.pos = i
				return nil
			}
		}
	}
}

// stringStep reads rest, the inside of a string: n bytes, up to and with
// the quote that ends the string (ended) or a backslash (escaped: the byte
// after it is escaped, whatever it is), or all of rest. afterBackslash says
// that rest's first byte is escaped.
func stringStep(rest []byte, afterBackslash bool) (n int, ended, escaped bool) {
	if afterBackslash {
		return 1, false, false
	}
	k := toQuoteOrBackslash(rest)
	if k == len(rest) {
		return k, false, false
	}
	return k + 1, rest[k] == '"', rest[k] == '\\'
}

// toQuoteOrBackslash returns where in b, the inside of a string, the next
// quote or backslash is; len(b) when there is none.
func toQuoteOrBackslash(b []byte) int {
	k := 0
	for k < len(b) && b[k] != '"' && b[k] != '\\' {
		k++
	}
	return k
}

// toStructural returns where in b the next byte skipNested stops at is;
// len(b) when there is none.
func toStructural(b []byte) int {
	k := 0
	for k < len(b) && !structural[b[k]] {
		k++
	}
	return k
}

// closes reports whether c, '}' or ']', closes the innermost of open:
// each is its opening bracket plus two.
func closes(open []byte, c byte) bool { return len(open) > 0 && open[len(open)-1] == c-2 }

// skipLiteral skips a number, true, false or null: everything up to the
// next delimiter. Only the top level of a document could end in one, and
// this scanner reads objects, so the stream ending here ends it early.
func (s *scanner) skipLiteral() error {
	for n := 0; ; n++ {
		if s.pos == s.end && !s.fill(s.pos) {
			return s.ended()
		}
		switch c := s.buf[s.pos]; c {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if n == 0 {
				return s.syntaxError("found %q, want a value", c)
			}
			return nil
		case '"', '{', '[', ':':
			return s.syntaxError("found %q inside a literal", c)
		}
		s.pos++
	}
}
