// Package docs checks the kubectl commands the documentation (docs/*.md and README.md) gives: every
// `kubectl apimsync ...` line is run with the plugin's own flag parsing, and no line puts a kubectl flag
// before the plugin's name (kubectl finds a plugin only when its name comes first).
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Command is a kubectl command found in a Markdown file.
type Command struct {
	// File and Line say where it is (for inline code, the first line of its paragraph).
	File string
	Line int
	// Text is the command as written, comments and other commands of the line left out.
	Text string
	// Args are its words after `kubectl`, shell quoting removed.
	Args []string
	// Inline is true for inline code: `kubectl apimsync convert` in a sentence names the command rather
	// than runs it.
	Inline bool
}

func (c Command) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// Plugin tells whether the command runs the plugin (`kubectl apimsync ...`), and returns the plugin's
// arguments.
func (c Command) Plugin() ([]string, bool) {
	if len(c.Args) > 0 && c.Args[0] == "apimsync" {
		return c.Args[1:], true
	}
	return nil, false
}

// FlagsBeforePlugin tells whether the command puts kubectl flags before the plugin's name (`kubectl -n
// team-a apimsync export`), which kubectl refuses: its plugin handler looks for a plugin only when the
// first argument is the plugin's name. A flag before a kubectl command (`kubectl -n team-a get apimsync`)
// is fine.
func (c Command) FlagsBeforePlugin() bool {
	flags := false
	for i, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "-"):
			flags = true
		case i > 0 && strings.HasPrefix(c.Args[i-1], "-") && !strings.Contains(c.Args[i-1], "="):
			// the value of the flag before it (-n team-a)
		default:
			return flags && a == "apimsync"
		}
	}
	return false
}

// Files are the Markdown files of the documentation, relative to the repository's root.
func Files(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files = append(files, filepath.Join(root, "README.md"))
	for i, f := range files {
		if files[i], err = filepath.Rel(root, f); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// fence opens or closes a fenced code block.
var fence = regexp.MustCompile("^\\s*(```|~~~)")

// inlineCode is a code span of a paragraph.
var inlineCode = regexp.MustCompile("`([^`]+)`")

// Commands are the kubectl commands of a Markdown file: each line of a fenced code block (continued by
// a trailing backslash) and each code span, split at ;, &&, || and |, that starts with kubectl (after
// environment assignments such as TOKEN=... and keywords such as do).
func Commands(root, file string) ([]Command, error) {
	raw, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	var out []Command
	add := func(line int, text string, inline bool) error {
		found, err := kubectlCommands(text)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
		for _, c := range found {
			c.File, c.Line, c.Inline = file, line, inline
			out = append(out, c)
		}
		return nil
	}
	var paragraph []string
	paragraphLine := 0
	flush := func() error {
		text := strings.Join(paragraph, " ")
		paragraph = nil
		for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
			if err := add(paragraphLine, m[1], true); err != nil {
				return err
			}
		}
		return nil
	}
	inFence, continued, continuedLine := false, "", 0
	for i, line := range strings.Split(string(raw), "\n") {
		n := i + 1
		switch {
		case fence.MatchString(line):
			if err := flush(); err != nil {
				return nil, err
			}
			inFence, continued = !inFence, ""
		case inFence:
			if continued == "" {
				continuedLine = n
			}
			if strings.HasSuffix(line, "\\") {
				continued += strings.TrimSuffix(line, "\\") + " "
				continue
			}
			if err := add(continuedLine, continued+line, false); err != nil {
				return nil, err
			}
			continued = ""
		case strings.TrimSpace(line) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			if len(paragraph) == 0 {
				paragraphLine = n
			}
			paragraph = append(paragraph, line)
		}
	}
	return out, flush()
}

// envAssignment is a shell variable assignment before a command (THREESCALE_TOKEN=...).
var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellKeywords may open a command in a loop or a condition (for ...; do kubectl ...; done).
var shellKeywords = map[string]bool{"do": true, "then": true, "else": true, "!": true, "time": true}

// kubectlCommands are the kubectl commands of one shell line.
func kubectlCommands(line string) ([]Command, error) {
	if !strings.Contains(line, "kubectl") {
		return nil, nil // prose, YAML or a diagram, not always shell
	}
	words, err := shellWords(line)
	if err != nil {
		return nil, err
	}
	var out []Command
	var cur []word
	end := func() {
		for len(cur) > 0 && (envAssignment.MatchString(cur[0].text) || shellKeywords[cur[0].text]) {
			cur = cur[1:]
		}
		if len(cur) > 0 && cur[0].text == "kubectl" {
			c := Command{Text: strings.TrimSpace(line[cur[0].start:cur[len(cur)-1].end])}
			for _, w := range cur[1:] {
				c.Args = append(c.Args, w.text)
			}
			out = append(out, c)
		}
		cur = nil
	}
	for _, w := range words {
		if w.operator {
			end()
			continue
		}
		cur = append(cur, w)
	}
	end()
	return out, nil
}

// word is a shell word (quotes removed) or operator, with where it is in its line.
type word struct {
	text       string
	operator   bool
	start, end int
}

// shellWords splits a line as a POSIX shell does, for what documentation uses: single and double quotes,
// backslashes, the operators ; & | && || (each its own word), and # comments. $(...) is kept as one word
// when it has no space.
func shellWords(line string) ([]word, error) {
	var out []word
	var b strings.Builder
	inWord, start := false, 0
	endWord := func(i int) {
		if inWord {
			out = append(out, word{text: b.String(), start: start, end: i})
		}
		b.Reset()
		inWord = false
	}
	begin := func(i int) {
		if !inWord {
			inWord, start = true, i
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t':
			endWord(i)
		case ch == '#' && !inWord:
			endWord(i)
			return out, nil
		case ch == ';' || ch == '&' || ch == '|':
			endWord(i)
			j := i + 1
			if j < len(line) && line[j] == ch && ch != ';' {
				j++
			}
			out = append(out, word{text: line[i:j], operator: true, start: i, end: j})
			i = j - 1
		case ch == '\\' && i+1 < len(line):
			begin(i)
			i++
			b.WriteByte(line[i])
		case ch == '\'' || ch == '"':
			begin(i)
			j := strings.IndexByte(line[i+1:], ch)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c in %q", ch, line)
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 1
		default:
			begin(i)
			b.WriteByte(ch)
		}
	}
	endWord(len(line))
	return out, nil
}
