package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// nonAlphanumeric is what 3scale-operator strips from spec.name to make a missing system name (Backend,
// Product, ActiveDoc).
var nonAlphanumeric = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// defaultSystemName is 3scale-operator's system name of a Backend or Product without spec.systemName.
func defaultSystemName(name string) string { return nonAlphanumeric.ReplaceAllString(name, "") }

// nonWord is what 3scale-operator replaces with "_" in an OpenAPI document's title to make the system
// name of the Product and Backend an OpenAPI generates.
var nonWord = regexp.MustCompile(`\W`)

// systemNamePattern is apimsync's pattern of system names (and of metric and method keys).
var systemNamePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

func validSystemName(s string) bool { return len(s) <= 255 && systemNamePattern.MatchString(s) }

// usernamePattern and emailPattern are apimsync's patterns of a developer user's username and email.
var (
	usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_.@+-]+$`)
	emailPattern    = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)
	// feePattern: setupFee and costMonth; pricePattern: pricePerUnit.
	feePattern   = regexp.MustCompile(`^[0-9]{1,10}(\.[0-9]{1,2})?$`)
	pricePattern = regexp.MustCompile(`^[0-9]{1,10}(\.[0-9]{1,4})?$`)
)

func validEmail(s string) bool { return len(s) >= 3 && len(s) <= 255 && emailPattern.MatchString(s) }

// nonDNS is what an object name cannot hold.
var nonDNS = regexp.MustCompile(`[^a-z0-9]+`)

// ObjectName makes an object name (a DNS-1123 subdomain of lowercase letters, digits and '-') from
// parts joined with '-': what the conversion names an object for which the input has no name (a plan),
// or a Backend or Product it only knows by system name. Long names are cut, with a hash of the whole.
func ObjectName(parts ...string) string {
	s := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(strings.Join(parts, "-")), "-"), "-")
	if s == "" {
		s = "x"
	}
	if len(s) > validation.DNS1123SubdomainMaxLength {
		s = strings.TrimRight(s[:validation.DNS1123SubdomainMaxLength-9], "-") + "-" + shortHash(strings.Join(parts, "/"))
	}
	return s
}

// PlanObjectName is the name of the ApplicationPlan made from the plan planSystemName of
// spec.applicationPlans of the Product named product (its output name). A name taken by another plan
// of the same namespace gets a hash of both names appended.
func PlanObjectName(product, planSystemName string) string {
	return ObjectName(product, planSystemName)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// validObjectName reports whether s can name an object.
func validObjectName(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// validURL says what apimsync's CEL rules of URLs say: an absolute URL of one of schemes, with a host.
func validURL(s string, schemes ...string) bool {
	u, err := url.ParseRequestURI(s)
	return err == nil && slices.Contains(schemes, u.Scheme) && u.Hostname() != ""
}

// tooLong reports whether s has more than n characters.
func tooLong(s string, n int) bool { return utf8.RuneCountInString(s) > n }

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
