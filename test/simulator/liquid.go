package simulator

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// liquidSyntaxError is CMS::Template#check_liquid_syntax (app/models/cms/template.rb:178-189): the error
// Liquid::Template.parse(draft) raises, "" when the draft parses. Porta runs the liquid gem 5.4.0
// (Gemfile.lock) in its default lax mode, without line numbers, so a message is "Liquid syntax error: "
// and the gem's text (lib/liquid/locales/en.yml). Modelled, as the gem parses (lib/liquid/tokenizer.rb,
// block_body.rb:112-159, block.rb, document.rb, tags/raw.rb):
//   - a tag left open ({% with no %} after it) or without a name ({% %}): "Tag '<token>' was not
//     properly terminated with regexp: /\%\}/"; an output left open ({{ with no } after it, or closed by
//     one } only): "Variable '<token>' was not properly terminated with regexp: /\}\}/";
//   - a tag Liquid::Template does not know (liquidTags): "Unknown tag 'foo'"; else or end outside any
//     block: "Unexpected outer 'else' tag";
//   - in a block, an end tag of another block: "'endfor' is not a valid delimiter for if tags. use
//     endif", an else the block does not take: "capture tag does not expect 'else' tag", another tag
//     the block does not take (liquidInnerTags): "Unknown tag 'when'"; a comment ignores them;
//   - a block never closed: "'if' tag was never closed"; raw with arguments: "Syntax Error in 'raw' -
//     Valid syntax: raw"; raw keeps everything up to {% endraw %} as text;
//   - blocks nested more than 100 deep (block.rb MAX_DEPTH): a StackLevelError, no SyntaxError, which
//     check_liquid_syntax reports as en.yml's cms/template liquid_syntax (config/locales/en.yml:2131).
//
// Not modelled: the tags' own syntax (e.g. {% if %} without a condition, {% for x %} without in, the
// arguments of porta's tags), the lines of a {% liquid %} tag and of a {% # %} comment.
func liquidSyntaxError(src string) string {
	var open []string // the blocks open, the innermost last
	inRaw := false
	for _, tok := range liquidTokens.FindAllString(src, -1) {
		if inRaw { // Raw#parse: text until {% endraw %} (tags/raw.rb:25-36)
			if m := liquidRawEnd.FindStringSubmatch(tok); m != nil && m[2] == "endraw" {
				open, inRaw = open[:len(open)-1], false
			}
			continue
		}
		if strings.HasPrefix(tok, "{{") {
			if !liquidVariable.MatchString(tok) {
				return liquidError(`Variable '%s' was not properly terminated with regexp: /\}\}/`, tok)
			}
			continue
		}
		m := liquidTag.FindStringSubmatch(tok)
		if m == nil {
			return liquidError(`Tag '%s' was not properly terminated with regexp: /\%%\}/`, tok)
		}
		name, markup := m[2], m[4]
		if name == "liquid" { // its lines are tags, not checked here
			continue
		}
		if block, known := liquidTags[name]; known {
			if name == "raw" && strings.TrimSpace(markup) != "" {
				return liquidError("Syntax Error in 'raw' - Valid syntax: raw")
			}
			if block {
				open = append(open, name)
				inRaw = name == "raw"
				if len(open) > liquidMaxDepth {
					return msgLiquidSyntax
				}
			}
			continue
		}
		if len(open) == 0 { // Document#unknown_tag (document.rb)
			if name == "else" || name == "end" {
				return liquidError("Unexpected outer '%s' tag", name)
			}
			return liquidError("Unknown tag '%s'", name)
		}
		top := open[len(open)-1]
		switch {
		case name == "end"+top:
			open = open[:len(open)-1]
		case top == "comment" || slices.Contains(liquidInnerTags[top], name): // Comment#unknown_tag ignores all
		case name == "else": // Block.raise_unknown_tag (block.rb)
			return liquidError("%s tag does not expect 'else' tag", top)
		case strings.HasPrefix(name, "end"):
			return liquidError("'%s' is not a valid delimiter for %s tags. use end%s", name, top, top)
		default:
			return liquidError("Unknown tag '%s'", name)
		}
	}
	if len(open) > 0 {
		return liquidError("'%s' tag was never closed", open[len(open)-1])
	}
	return ""
}

func liquidError(format string, args ...any) string {
	return "Liquid syntax error: " + fmt.Sprintf(format, args...)
}

// msgLiquidSyntax is en.yml's cms/template liquid_syntax (config/locales/en.yml:2131), for a parse
// failure that is no Liquid::SyntaxError (template.rb:184-186).
const msgLiquidSyntax = "does not contain valid liquid syntax or is using unknown tags"

// liquidMaxDepth is Liquid::Block::MAX_DEPTH (block.rb).
const liquidMaxDepth = 100

var (
	// liquidTokens are Liquid's TemplateParser (lib/liquid.rb): a tag up to the first %}, an output up to
	// the first } (and a second one if there), or an opening left alone. The text between is not needed.
	liquidTokens = regexp.MustCompile(`(?s)\{%.*?%\}|\{\{.*?\}\}?|\{%|\{\{`)
	// liquidTag is BlockBody::FullToken, liquidVariable BlockBody::ContentOfVariable and liquidRawEnd
	// Raw::FullTokenPossiblyInvalid; [ \t\n\v\f\r] is Ruby's \s.
	liquidTag      = regexp.MustCompile(`(?s)^\{%-?([ \t\n\v\f\r]*)(#|\w+)([ \t\n\v\f\r]*)(.*?)-?%\}$`)
	liquidVariable = regexp.MustCompile(`(?s)^\{\{-?(.*?)-?\}\}$`)
	liquidRawEnd   = regexp.MustCompile(`(?s)^(.*)\{%[ \t\n\v\f\r]*(\w+)[ \t\n\v\f\r]*(.*)?%\}$`)
)

// liquidTags are the tags Liquid::Template knows in porta, true for a block (closed by end<name>):
// the gem's (Template.register_tag in lib/liquid/tags/*.rb) and porta's
// (lib/developer_portal/config/initializers/liquid.rb:17-56; each named by Liquid::Docs::DSL::Tags#tag,
// lib/developer_portal/lib/liquid/docs/dsl/tags.rb:40-48: the one it sets, else the class name
// underscored; blocks: the Liquid::Block subclasses Form, Email and ContentFor).
var liquidTags = map[string]bool{
	// liquid 5.4.0
	"assign": false, "break": false, "capture": true, "case": true, "comment": true, "continue": false, "cycle": false,
	"decrement": false, "echo": false, "for": true, "if": true, "ifchanged": true, "include": false, "increment": false,
	"#": false, "raw": true, "render": false, "tablerow": true, "unless": true,
	// porta
	"authorize_net_form": false, "payment_express_form": false, "braintree_customer_form": false, "ogone_form": false,
	"stripe_form": false, "content": false, "container": false, "credit_card_missing": false, "essential_assets": false,
	"flash": false, "footer": false, "oldfooter": false, "form": true, "internal_error": false, "latest_forum_posts": false,
	"latest_messages": false, "logo": false, "menu": false, "submenu": false, "theme_stylesheet": false, "user_widget": false,
	"plan_widget": false, "page_section": false, "page_sub_section": false, "trial_notice": false, "email": true,
	"debug": false, "csrf": false, "3scale_essentials": false, "portlet": false, "active_docs": false, "content_for": true,
	"sort_link": false, "cdn_asset": false, "disable_client_cache": false,
}

// liquidInnerTags are the tags a block takes before its end: If's and Unless's elsif and else
// (tags/if.rb), Case's when and else (tags/case.rb), For's else (tags/for.rb), and Email's subtags
// (lib/developer_portal/lib/liquid/tags/email.rb:73-97).
var liquidInnerTags = map[string][]string{
	"if": {"elsif", "else"}, "unless": {"elsif", "else"}, "case": {"when", "else"}, "for": {"else"},
	"email": {"do_not_send", "subject", "header", "bcc", "cc", "reply_to", "from"},
}
