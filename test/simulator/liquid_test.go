package simulator

import (
	"strings"
	"testing"
)

// TestLiquidSyntax: the drafts Liquid::Template.parse refuses (liquid 5.4.0 as porta runs it,
// app/models/cms/template.rb:178-189), with the gem's messages (lib/liquid/locales/en.yml), and those it
// takes, porta's own tags among them (lib/developer_portal/config/initializers/liquid.rb:17-56).
func TestLiquidSyntax(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"<p>plain</p> { } }} %}", ""},
		{"{% if a %}x{% elsif b %}y{% else %}z{% endif %}", ""},
		{"{%- unless a -%}{% else %}{%- endunless -%}", ""},
		{"{% case a %}{% when 1 %}{% else %}{% endcase %}", ""},
		{"{% for x in xs %}{{ x | upcase }}{% else %}none{% endfor %}", ""},
		{"{% comment %}{% nope %}{% else %}{% endif %}{% endcomment %}", ""},
		{"{% raw %}{% if {{ x }{% endraw %}", ""},
		// porta's tags: content (layout.rb's {% content %}), 3scale_essentials, the form and content_for blocks.
		{"{% content %}{% 3scale_essentials %}{% include 'menu' %}{% form 'signup', user %}{% endform %}{% content_for x %}y{% endcontent_for %}", ""},
		{"{% email %}{% subject = 'Hi' %}{% do_not_send %}{% endemail %}", ""},
		{"{% if x ", `Liquid syntax error: Tag '{%' was not properly terminated with regexp: /\%\}/`},
		{"{% %}", `Liquid syntax error: Tag '{% %}' was not properly terminated with regexp: /\%\}/`},
		{"{{ x ", `Liquid syntax error: Variable '{{' was not properly terminated with regexp: /\}\}/`},
		{"{{ x } y }}", `Liquid syntax error: Variable '{{ x }' was not properly terminated with regexp: /\}\}/`},
		{"{% if x %}<p>", "Liquid syntax error: 'if' tag was never closed"},
		{"{% for x in xs %}{% if x %}{% endfor %}", "Liquid syntax error: 'endfor' is not a valid delimiter for if tags. use endif"},
		{"{% capture x %}{% else %}{% endcapture %}", "Liquid syntax error: capture tag does not expect 'else' tag"},
		{"{% for x in xs %}{% when 1 %}{% endfor %}", "Liquid syntax error: Unknown tag 'when'"},
		{"{% foo %}", "Liquid syntax error: Unknown tag 'foo'"},
		{"{% endif %}", "Liquid syntax error: Unknown tag 'endif'"},
		{"{% else %}", "Liquid syntax error: Unexpected outer 'else' tag"},
		{"{% raw x %}{% endraw %}", "Liquid syntax error: Syntax Error in 'raw' - Valid syntax: raw"},
		{"{% raw %}{{ x }}", "Liquid syntax error: 'raw' tag was never closed"},
		{strings.Repeat("{% if a %}", 100) + strings.Repeat("{% endif %}", 100), ""},
		{strings.Repeat("{% if a %}", 101) + strings.Repeat("{% endif %}", 101), msgLiquidSyntax},
	} {
		if got := liquidSyntaxError(tc.src); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.src, got, tc.want)
		}
	}
}
