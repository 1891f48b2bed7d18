// Command merge-keys-gen writes the tables of controlplane/src/semantics/merge_keys.rs: the patch
// metadata of the built-in kinds (how a strategic merge patch merges each list, how server-side
// apply tracks it, which structs and maps are atomic, which fields retain keys) and how each field
// shows in the Go zero value of its struct.
//
// The list, map and struct markers come from the OpenAPI v3 documents Kubernetes publishes
// (k8s.io/kubernetes api/openapi-spec/v3, which carry the patchStrategy/patchMergeKey struct tags
// and the +listType/+listMapKey/+mapType/+structType markers of k8s.io/api as
// x-kubernetes-* extensions, and the defaults of list-map keys). Which fields exist and how they
// show in the zero value come from the Go types themselves, by reflection: a pointer, slice
// ([]byte included) or map is absent when omitempty and null otherwise, a non-pointer struct is
// an empty object, a non-pointer time null, other non-pointer value types (IntOrString,
// Quantity) their JSON zero, and a plain scalar its zero unless omitempty. Fields whose type is a
// named non-struct type of another Go package are taken as absent from the zero value, and
// inlined structs of another package are left out (see jsonFields): the tables checked in before
// this generator existed were made that way (ObjectMeta's uid and the status of the apps/v1
// conditions are missing from them), and the generator reproduces them byte for byte. Resolving
// those types too would add such fields, which changes what server-side apply compares.
//
// Types are numbered breadth first from the kinds' root types, fields in name order; a type gets
// an entry only when it has something to say (it is atomic, or one of its fields is a list, a
// map, an arbitrary JSON value, a struct with an entry, or shows in the zero value).
//
// Usage: merge-keys-gen -openapi DIR -in merge_keys.rs > merge_keys.rs.new, where DIR holds the
// OpenAPI v3 documents; the part of the file between the generated-tables markers is replaced.
// Run it through generate.sh (next to this file).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// The kinds described, in the order of the KINDS table.
var kinds = []struct {
	group, kind string
	object      any
}{
	{"", "Pod", corev1.Pod{}},
	{"", "PodTemplate", corev1.PodTemplate{}},
	{"", "ReplicationController", corev1.ReplicationController{}},
	{"", "Service", corev1.Service{}},
	{"", "Node", corev1.Node{}},
	{"", "Namespace", corev1.Namespace{}},
	{"", "ConfigMap", corev1.ConfigMap{}},
	{"", "Secret", corev1.Secret{}},
	{"", "ServiceAccount", corev1.ServiceAccount{}},
	{"", "PersistentVolumeClaim", corev1.PersistentVolumeClaim{}},
	{"", "PersistentVolume", corev1.PersistentVolume{}},
	{"", "Event", corev1.Event{}},
	{"", "Endpoints", corev1.Endpoints{}},
	{"", "LimitRange", corev1.LimitRange{}},
	{"", "ResourceQuota", corev1.ResourceQuota{}},
	{"", "Binding", corev1.Binding{}},
	{"apps", "Deployment", appsv1.Deployment{}},
	{"apps", "ReplicaSet", appsv1.ReplicaSet{}},
	{"apps", "StatefulSet", appsv1.StatefulSet{}},
	{"apps", "DaemonSet", appsv1.DaemonSet{}},
	{"apps", "ControllerRevision", appsv1.ControllerRevision{}},
	{"batch", "Job", batchv1.Job{}},
	{"batch", "CronJob", batchv1.CronJob{}},
	{"autoscaling", "Scale", autoscalingv1.Scale{}},
	{"autoscaling", "HorizontalPodAutoscaler", autoscalingv2.HorizontalPodAutoscaler{}},
	{"coordination.k8s.io", "Lease", coordinationv1.Lease{}},
	{"policy", "PodDisruptionBudget", policyv1.PodDisruptionBudget{}},
	{"policy", "Eviction", policyv1.Eviction{}},
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration", admissionregistrationv1.MutatingWebhookConfiguration{}},
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", admissionregistrationv1.ValidatingWebhookConfiguration{}},
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", admissionregistrationv1.ValidatingAdmissionPolicy{}},
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", admissionregistrationv1.ValidatingAdmissionPolicyBinding{}},
	{"apiextensions.k8s.io", "CustomResourceDefinition", apiextensionsv1.CustomResourceDefinition{}},
	{"apiregistration.k8s.io", "APIService", apiregistrationv1.APIService{}},
	{"events.k8s.io", "Event", eventsv1.Event{}},
	{"discovery.k8s.io", "EndpointSlice", discoveryv1.EndpointSlice{}},
	{"rbac.authorization.k8s.io", "Role", rbacv1.Role{}},
	{"rbac.authorization.k8s.io", "ClusterRole", rbacv1.ClusterRole{}},
	{"rbac.authorization.k8s.io", "RoleBinding", rbacv1.RoleBinding{}},
	{"rbac.authorization.k8s.io", "ClusterRoleBinding", rbacv1.ClusterRoleBinding{}},
	{"networking.k8s.io", "Ingress", networkingv1.Ingress{}},
	{"networking.k8s.io", "IngressClass", networkingv1.IngressClass{}},
	{"networking.k8s.io", "NetworkPolicy", networkingv1.NetworkPolicy{}},
	{"scheduling.k8s.io", "PriorityClass", schedulingv1.PriorityClass{}},
	{"storage.k8s.io", "StorageClass", storagev1.StorageClass{}},
	{"storage.k8s.io", "CSIDriver", storagev1.CSIDriver{}},
	{"storage.k8s.io", "CSINode", storagev1.CSINode{}},
	{"storage.k8s.io", "VolumeAttachment", storagev1.VolumeAttachment{}},
	{"node.k8s.io", "RuntimeClass", nodev1.RuntimeClass{}},
	{"certificates.k8s.io", "CertificateSigningRequest", certificatesv1.CertificateSigningRequest{}},
}

// The markers around the generated part of merge_keys.rs.
const (
	beginMarker = "// BEGIN GENERATED TABLES"
	endMarker   = "// END GENERATED TABLES"
)

// Schema is the part of an OpenAPI v3 schema this program reads.
type Schema struct {
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*Schema `json:"properties"`
	Items                *Schema            `json:"items"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	AllOf                []*Schema          `json:"allOf"`
	OneOf                []*Schema          `json:"oneOf"`
	Ref                  string             `json:"$ref"`
	Default              json.RawMessage    `json:"default"`
	PatchStrategy        string             `json:"x-kubernetes-patch-strategy"`
	PatchMergeKey        string             `json:"x-kubernetes-patch-merge-key"`
	ListType             string             `json:"x-kubernetes-list-type"`
	ListMapKeys          []string           `json:"x-kubernetes-list-map-keys"`
	MapType              string             `json:"x-kubernetes-map-type"`
}

var definitions = map[string]*Schema{}

// loadDefinitions reads components.schemas of every document in dir (the documents agree on
// every definition they share).
func loadDefinitions(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no OpenAPI documents in %s", dir)
	}
	sort.Strings(files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var doc struct {
			Components struct {
				Schemas map[string]*Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for name, schema := range doc.Components.Schemas {
			definitions[name] = schema
		}
	}
	return nil
}

// definitionName is the OpenAPI name of a Go type (io.k8s.api.core.v1.Pod).
func definitionName(t reflect.Type) string {
	return "io." + strings.ReplaceAll(strings.Replace(t.PkgPath(), "k8s.io/", "k8s/", 1), "/", ".") + "." + t.Name()
}

// referenced is the definition a property refers to (directly or through allOf), if any.
func referenced(s *Schema) *Schema {
	ref := s.Ref
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref
	}
	if ref == "" {
		return nil
	}
	def, ok := definitions[strings.TrimPrefix(ref, "#/components/schemas/")]
	if !ok {
		fail("unknown definition %s", ref)
	}
	return def
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "merge-keys-gen: "+format+"\n", args...)
	os.Exit(1)
}

// How a Go struct type shows: a struct with fields, a scalar (times, IntOrString, Quantity:
// definitions that are not objects), or any JSON value (objects without declared properties:
// RawExtension, FieldsV1, the CRD schema's JSON values).
type structKind int

const (
	structFields structKind = iota
	structScalar
	structAny
)

func kindOfStruct(t reflect.Type) structKind {
	def, ok := definitions[definitionName(t)]
	if !ok {
		fail("no OpenAPI definition for %s", definitionName(t))
	}
	switch {
	case def.Properties != nil:
		return structFields
	case def.Type == "string" || def.Type == "integer" || def.Type == "number" || def.Type == "boolean" || len(def.OneOf) > 0:
		return structScalar
	default:
		return structAny
	}
}

// goField is one JSON field of a Go struct, with its OpenAPI property.
type goField struct {
	name      string
	typ       reflect.Type
	omitEmpty bool
	// foreign: the field's type is a named non-struct type of another Go package
	// (types.UID, v1.ConditionStatus in apps/v1, v1.ResourceList in node/v1).
	foreign  bool
	property *Schema
}

// jsonFields lists the JSON fields of a struct, sorted by name, with inlined structs of the same
// Go package flattened. As if the Go declarations were read package by package, seeing into the
// types of that package only, inlined structs of other packages (metav1.TypeMeta in every kind)
// are left out, and fields of a named non-struct type of another package are marked foreign
// (absent from the zero value, see zero).
func jsonFields(t reflect.Type) []goField {
	def := definitions[definitionName(t)]
	var fields []goField
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			field := t.Field(i)
			if !field.IsExported() {
				continue
			}
			tag := field.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, options, _ := strings.Cut(tag, ",")
			inline := field.Anonymous && name == "" || strings.Contains(","+options+",", ",inline,")
			if inline {
				if field.Type.PkgPath() == t.PkgPath() {
					walk(field.Type)
				}
				continue
			}
			if name == "" {
				name = field.Name
			}
			property, ok := def.Properties[name]
			if !ok {
				fail("%s.%s has no OpenAPI property", definitionName(t), name)
			}
			fields = append(fields, goField{
				name:      name,
				typ:       field.Type,
				omitEmpty: strings.Contains(","+options+",", ",omitempty,"),
				foreign:   field.Type.PkgPath() != "" && field.Type.Kind() != reflect.Struct && field.Type.PkgPath() != t.PkgPath(),
				property:  property,
			})
		}
	}
	walk(t)
	sort.Slice(fields, func(i, j int) bool { return fields[i].name < fields[j].name })
	return fields
}

var byteSlice = reflect.TypeOf([]byte(nil))

// isStructType: a Go type whose values are structs with declared fields.
func isStructType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && kindOfStruct(t) == structFields
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func isList(t reflect.Type) bool { return t.Kind() == reflect.Slice && t != byteSlice }

// The state of the walk over types.
var (
	says    = map[reflect.Type]bool{} // whether a struct type has something to say
	structs []reflect.Type            // every struct type reachable from the kinds
	seen    = map[reflect.Type]bool{}
)

func collect(t reflect.Type) {
	t = deref(t)
	switch {
	case isList(t) || t.Kind() == reflect.Map:
		collect(t.Elem())
	case isStructType(t):
		if seen[t] {
			return
		}
		seen[t] = true
		structs = append(structs, t)
		for _, field := range jsonFields(t) {
			collect(field.typ)
		}
	}
}

func atomicType(t reflect.Type) bool {
	return definitions[definitionName(t)].MapType == "atomic"
}

// zero renders how a field shows in the zero value of its struct.
func zero(field goField) string {
	t := field.typ
	switch {
	case field.foreign:
		return "Zero::Absent"
	case t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
		if field.omitEmpty {
			return "Zero::Absent"
		}
		return "Zero::Null"
	case t.Kind() == reflect.Struct && kindOfStruct(t) != structScalar:
		return "Zero::Empty"
	case t.Kind() == reflect.Struct:
		// Value types with their own JSON form show it whatever omitempty says.
		encoded, err := json.Marshal(reflect.Zero(t).Interface())
		if err != nil {
			fail("%s: %v", t, err)
		}
		if string(encoded) == "null" {
			return "Zero::Null"
		}
		return fmt.Sprintf("Zero::Value(%s)", rustString(string(encoded)))
	case field.omitEmpty:
		return "Zero::OmitEmpty"
	default:
		encoded, err := json.Marshal(reflect.Zero(t).Interface())
		if err != nil {
			fail("%s: %v", t, err)
		}
		return fmt.Sprintf("Zero::Value(%s)", rustString(string(encoded)))
	}
}

// hasEntry: whether a field is listed (plain scalars and plain structs absent from the zero value
// are left out).
func hasEntry(field goField) bool {
	t := deref(field.typ)
	switch {
	case isList(t) || t.Kind() == reflect.Map:
		return true
	case t.Kind() == reflect.Struct && kindOfStruct(t) == structAny, t.Kind() == reflect.Interface:
		return true
	case isStructType(t) && says[t]:
		return true
	default:
		return zero(field) != "Zero::Absent"
	}
}

func computeSays() {
	for changed := true; changed; {
		changed = false
		for _, t := range structs {
			if says[t] {
				continue
			}
			result := atomicType(t)
			for _, field := range jsonFields(t) {
				result = result || hasEntry(field)
			}
			if result {
				says[t] = true
				changed = true
			}
		}
	}
}

// Numbering: breadth first from the kinds, fields in name order.
var (
	index = map[reflect.Type]int{}
	order []reflect.Type
)

func number(t reflect.Type) {
	t = deref(t)
	switch {
	case isList(t) || t.Kind() == reflect.Map:
		number(t.Elem())
	case isStructType(t) && says[t]:
		if _, ok := index[t]; !ok {
			index[t] = len(order)
			order = append(order, t)
		}
	}
}

func elem(t reflect.Type) string {
	t = deref(t)
	switch {
	case isList(t):
		return "Elem::List"
	case t.Kind() == reflect.Interface, t.Kind() == reflect.Struct && kindOfStruct(t) == structAny:
		return "Elem::Any"
	case isStructType(t) && says[t]:
		return fmt.Sprintf("Elem::Struct(%d)", index[t])
	default:
		return "Elem::Plain"
	}
}

func rustString(text string) string {
	var out strings.Builder
	out.WriteByte('"')
	for _, r := range text {
		switch r {
		case '"', '\\':
			out.WriteByte('\\')
			out.WriteRune(r)
		default:
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
	return out.String()
}

// listShape renders a list field: elements, strategic-merge strategy, apply list type.
func listShape(field goField) string {
	p := field.property
	t := deref(field.typ)
	smp := "Smp::Replace"
	if strings.Contains(p.PatchStrategy, "merge") {
		if p.PatchMergeKey != "" {
			smp = fmt.Sprintf("Smp::Merge(%s)", rustString(p.PatchMergeKey))
		} else {
			smp = "Smp::MergeSet"
		}
	}
	var ssa string
	switch p.ListType {
	case "atomic":
		ssa = "Ssa::Atomic"
	case "set":
		ssa = "Ssa::Set"
	case "map":
		ssa = mapListType(p.ListMapKeys, t.Elem())
	case "":
		// No list type: server-side apply follows the patch strategy.
		switch {
		case strings.Contains(p.PatchStrategy, "merge") && p.PatchMergeKey != "":
			ssa = mapListType([]string{p.PatchMergeKey}, t.Elem())
		case strings.Contains(p.PatchStrategy, "merge"):
			ssa = "Ssa::Set"
		default:
			ssa = "Ssa::Atomic"
		}
	default:
		fail("unknown list type %q", p.ListType)
	}
	return fmt.Sprintf("Shape::List(%s, %s, %s)", elem(t.Elem()), smp, ssa)
}

// mapListType renders an associative list's keys and the schema defaults of the keys that have
// one.
func mapListType(keys []string, item reflect.Type) string {
	var defaults []string
	quoted := make([]string, len(keys))
	itemDef := definitions[definitionName(deref(item))]
	for i, key := range keys {
		quoted[i] = rustString(key)
		if itemDef == nil {
			continue
		}
		if prop, ok := itemDef.Properties[key]; ok && len(prop.Default) > 0 {
			var value any
			if err := json.Unmarshal(prop.Default, &value); err != nil {
				fail("default of %s: %v", key, err)
			}
			encoded, _ := json.Marshal(value)
			defaults = append(defaults, fmt.Sprintf("(%s, %s)", rustString(key), rustString(string(encoded))))
		}
	}
	return fmt.Sprintf("Ssa::Map(&[%s], &[%s])", strings.Join(quoted, ", "), strings.Join(defaults, ", "))
}

func shape(field goField) string {
	t := deref(field.typ)
	switch {
	case isList(t):
		return listShape(field)
	case t.Kind() == reflect.Map:
		return fmt.Sprintf("Shape::Map(%s, %t)", elem(t.Elem()), field.property.MapType == "atomic")
	case t.Kind() == reflect.Interface, t.Kind() == reflect.Struct && kindOfStruct(t) == structAny:
		return "Shape::Any"
	case isStructType(t) && says[t]:
		return fmt.Sprintf("Shape::Struct(%d, %t)", index[t], atomicType(t))
	case isStructType(t):
		return fmt.Sprintf("Shape::Struct(PLAIN, %t)", atomicType(t))
	default:
		return "Shape::Scalar"
	}
}

func tables() string {
	for _, k := range kinds {
		collect(reflect.TypeOf(k.object))
	}
	computeSays()
	for _, k := range kinds {
		t := reflect.TypeOf(k.object)
		if !says[t] {
			fail("%s has nothing to say", t)
		}
		number(t)
	}
	for i := 0; i < len(order); i++ {
		for _, field := range jsonFields(order[i]) {
			if hasEntry(field) {
				number(field.typ)
			}
		}
	}

	var out strings.Builder
	out.WriteString("#[rustfmt::skip]\n")
	fmt.Fprintf(&out, "static TYPES: [TypeDef; %d] = [\n", len(order))
	for i, t := range order {
		fmt.Fprintf(&out, "    // %d\n", i)
		name := strings.TrimPrefix(definitionName(t), "io.k8s.")
		var lines []string
		for _, field := range jsonFields(t) {
			if !hasEntry(field) {
				continue
			}
			retain := strings.Contains(field.property.PatchStrategy, "retainKeys")
			lines = append(lines, fmt.Sprintf("        f(%s, %s, %t, %s),\n", rustString(field.name), shape(field), retain, zero(field)))
		}
		if len(lines) == 0 {
			fmt.Fprintf(&out, "    TypeDef { name: %s, atomic: %t, fields: &[] },\n", rustString(name), atomicType(t))
			continue
		}
		fmt.Fprintf(&out, "    TypeDef { name: %s, atomic: %t, fields: &[\n", rustString(name), atomicType(t))
		for _, line := range lines {
			out.WriteString(line)
		}
		out.WriteString("    ] },\n")
	}
	out.WriteString("];\n\n#[rustfmt::skip]\n")
	fmt.Fprintf(&out, "static KINDS: [KindPatchMeta; %d] = [\n", len(kinds))
	for _, k := range kinds {
		fmt.Fprintf(&out, "    KindPatchMeta { group: %s, kind: %s, root: %d },\n", rustString(k.group), rustString(k.kind), index[reflect.TypeOf(k.object)])
	}
	out.WriteString("];\n")
	return out.String()
}

func main() {
	openapi := flag.String("openapi", "", "directory of the Kubernetes OpenAPI v3 documents (api/openapi-spec/v3)")
	in := flag.String("in", "", "merge_keys.rs, whose generated part is replaced")
	flag.Parse()
	if *openapi == "" || *in == "" {
		fail("usage: merge-keys-gen -openapi DIR -in merge_keys.rs")
	}
	if err := loadDefinitions(*openapi); err != nil {
		fail("%v", err)
	}
	source, err := os.ReadFile(*in)
	if err != nil {
		fail("%v", err)
	}
	text := string(source)
	begin := strings.Index(text, beginMarker+"\n")
	end := strings.Index(text, endMarker+"\n")
	if begin < 0 || end < begin {
		fail("%s: no %q ... %q section", *in, beginMarker, endMarker)
	}
	// Keep the marker line and the comment lines after it.
	head := begin + len(beginMarker) + 1
	for strings.HasPrefix(text[head:], "//") {
		head += strings.Index(text[head:], "\n") + 1
	}
	fmt.Print(text[:head] + tables() + text[end:])
}
