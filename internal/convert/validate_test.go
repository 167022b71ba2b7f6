package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/apimsync/apimsync/apis/capabilities/v1alpha1"
)

// crdSchema validates objects of one kind as the API server does on create: pruning (unknown fields),
// defaults, the OpenAPI schema, list types, and the CEL rules (those without oldSelf).
type crdSchema struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

var (
	loadSchemas sync.Once
	schemas     map[string]*crdSchema
	schemasErr  error
)

// crdSchemas reads apimsync's CRDs (config/crd/bases), by kind.
func crdSchemas(t *testing.T) map[string]*crdSchema {
	t.Helper()
	loadSchemas.Do(func() {
		schemas = map[string]*crdSchema{}
		files, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
		if err != nil || len(files) == 0 {
			schemasErr = err
			return
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				schemasErr = err
				return
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(raw, &crd); err != nil {
				schemasErr = err
				return
			}
			for _, v := range crd.Spec.Versions {
				if v.Name != v1alpha1.GroupVersion.Version || v.Schema == nil {
					continue
				}
				var internal apiextensionsinternal.JSONSchemaProps
				if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
					schemasErr = err
					return
				}
				structural, err := structuralschema.NewStructural(&internal)
				if err != nil {
					schemasErr = err
					return
				}
				validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
				if err != nil {
					schemasErr = err
					return
				}
				schemas[crd.Spec.Names.Kind] = &crdSchema{structural: structural, schema: validator,
					cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}
			}
		}
	})
	if schemasErr != nil || len(schemas) == 0 {
		t.Fatalf("cannot read apimsync's CRDs: %v", schemasErr)
	}
	return schemas
}

// validate returns what is wrong with obj as apimsync's API would see it: its JSON must read back into
// its type with no unknown field and unchanged, and pass its CRD's schema and CEL rules.
func validate(t *testing.T, obj client.Object) []string {
	t.Helper()
	var problems []string
	raw, err := json.Marshal(obj)
	if err != nil {
		return []string{err.Error()}
	}
	back := newObject(t, kindOf(obj))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(back); err != nil {
		problems = append(problems, "JSON does not read back: "+err.Error())
	} else if diff := cmp.Diff(obj, back); diff != "" {
		problems = append(problems, "JSON reads back different:\n"+diff)
	}
	s := crdSchemas(t)[kindOf(obj)]
	if s == nil {
		return append(problems, "no CRD for kind "+kindOf(obj))
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return append(problems, err.Error())
	}
	delete(u, "status")
	if pruned := structuralpruning.PruneWithOptions(u, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(pruned) > 0 {
		problems = append(problems, "fields the CRD does not have: "+strings.Join(pruned, ", "))
	}
	structuraldefaulting.Default(u, s.structural)
	var errs field.ErrorList
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u, s.schema)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, u)...)
	if s.cel != nil {
		celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, u, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	return problems
}

// TestValidationCatchesInvalidObjects makes sure the validation above refuses what apimsync's API
// refuses, so that the converted objects passing it means something.
func TestValidationCatchesInvalidObjects(t *testing.T) {
	cases := map[string]struct {
		obj  client.Object
		want string
	}{
		"a Backend with an ftp URL": {&v1alpha1.Backend{TypeMeta: typeMeta("Backend"), Spec: v1alpha1.BackendSpec{Name: "b", PrivateBaseURL: "ftp://x"}},
			"privateBaseURL must be an absolute http, https, ws or wss URL"},
		"two deployment options": {&v1alpha1.Product{TypeMeta: typeMeta("Product"), Spec: v1alpha1.ProductSpec{Name: "p",
			Deployment: &v1alpha1.DeploymentSpec{ApicastHosted: &v1alpha1.ApicastHostedSpec{}, ApicastSelfManaged: &v1alpha1.ApicastSelfManagedSpec{}}}},
			"choose exactly one deployment option"},
		"a mapping rule of no metric": {&v1alpha1.Product{TypeMeta: typeMeta("Product"), Spec: v1alpha1.ProductSpec{Name: "p",
			MappingRules: []v1alpha1.MappingRuleSpec{{HTTPMethod: "GET", Pattern: "/", MetricMethodRef: "nope"}}}}, "must be 'hits' or a key of metrics or methods"},
		"an account without an admin": {&v1alpha1.DeveloperAccount{TypeMeta: typeMeta("DeveloperAccount"), Spec: v1alpha1.DeveloperAccountSpec{OrgName: "o",
			Users: []v1alpha1.DeveloperUserSpec{{Username: "u", Email: "u@x", Role: "member"}}}}, "at least one user with role admin"},
		"a plan with a bad fee": {&v1alpha1.ApplicationPlan{TypeMeta: typeMeta("ApplicationPlan"), Spec: v1alpha1.ApplicationPlanSpec{ProductRef: "p", Name: "n",
			SetupFee: "1.234"}}, "spec.setupFee"},
		"two limits of one metric and period": {&v1alpha1.ApplicationPlan{TypeMeta: typeMeta("ApplicationPlan"), Spec: v1alpha1.ApplicationPlanSpec{ProductRef: "p", Name: "n",
			Limits: []v1alpha1.LimitSpec{{Period: "day", MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "hits"}}, {Period: "day", MetricMethodRef: v1alpha1.MetricMethodRef{SystemName: "hits"}}}}},
			"two limits have the same period"},
		"duplicate mapping rules": {&v1alpha1.Backend{TypeMeta: typeMeta("Backend"), Spec: v1alpha1.BackendSpec{Name: "b", PrivateBaseURL: "https://x",
			MappingRules: []v1alpha1.MappingRuleSpec{{HTTPMethod: "GET", Pattern: "/", MetricMethodRef: "hits"}, {HTTPMethod: "GET", Pattern: "/", MetricMethodRef: "hits"}}}},
			"Duplicate value"},
		"an ActiveDoc without a document": {&v1alpha1.ActiveDoc{TypeMeta: typeMeta("ActiveDoc"), Spec: v1alpha1.ActiveDocSpec{Name: "d"}}, "set exactly one of document and documentRef"},
		"a Tenant without its Secret's namespace": {&v1alpha1.Tenant{TypeMeta: typeMeta("Tenant"), Spec: v1alpha1.TenantSpec{MasterAccountRef: v1alpha1.ProviderAccountRef{Name: "m"},
			OrganizationName: "o", Username: "u", Email: "a@b", PasswordRef: v1alpha1.LocalSecretKeyRef{Name: "p", Key: "k"}}}, "spec.providerAccountSecret.namespace"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.obj.SetName("x")
			problems := validate(t, tc.obj)
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("problems %q do not say %q", problems, tc.want)
			}
		})
	}
}
