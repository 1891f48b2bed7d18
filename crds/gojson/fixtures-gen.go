// Command fixtures-gen writes the golden fixtures of kruise_crds::gojson and of the revision
// code of the CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers
// (crds/src/gojson/fixtures/), computed by upstream OpenKruise v1.9.0's own Go code:
//
//   - for each manifest in manifests/ (one CloneSet, StatefulSet or DaemonSet of
//     apps.kruise.io/v1alpha1 or v1beta1): the manifest; the object its mutating webhook stores
//     on create (the webhook handler run on an AdmissionRequest, its JSON patch applied); that
//     object as the controller reads it (v1beta1, through the conversion functions for v1alpha1);
//     the ControllerRevision the controller computes for it (its name and the exact bytes of its
//     data); and for CloneSet the labels of a pod created at that revision;
//   - quantities.json: resource.Quantity inputs with what ParseQuantity + MarshalJSON make of
//     them, and what SetDefaults_ResourceList's RoundUp(milli) makes of them;
//   - templates.json: PodTemplateSpec JSON inputs with the JSON Go's typed
//     PodTemplateSpec (k8s.io/api v0.32.10) marshals after decoding them.
//
// Run it through generate.sh (next to this file); the output is committed.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
	admissionv1 "k8s.io/api/admission/v1"
	apps "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kubecontroller "k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/history"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/openkruise/kruise/apis"
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	clonesetcore "github.com/openkruise/kruise/pkg/controller/cloneset/core"
	clonesetrevision "github.com/openkruise/kruise/pkg/controller/cloneset/revision"
	clonesetmutating "github.com/openkruise/kruise/pkg/webhook/cloneset/mutating"
	daemonsetmutating "github.com/openkruise/kruise/pkg/webhook/daemonset/mutating"
	statefulsetmutating "github.com/openkruise/kruise/pkg/webhook/statefulset/mutating"
)

// Fixture is one manifest's file.
type Fixture struct {
	Name string `json:"name"`
	// Manifest is the input, as JSON.
	Manifest json.RawMessage `json:"manifest"`
	// Stored is the manifest after the mutating webhook's patch, in the manifest's version.
	Stored json.RawMessage `json:"stored"`
	// Controller is the v1beta1 object the controller works on (json.Marshal of the typed object).
	Controller json.RawMessage `json:"controller"`
	Revision   Revision        `json:"revision"`
	// PodLabels are the labels of a pod the CloneSet controller creates at the revision.
	PodLabels map[string]string `json:"podLabels,omitempty"`
}

// Revision is what the controller computes for the object's template.
type Revision struct {
	// Name of the ControllerRevision (CloneSet, StatefulSet: <name>-<HashControllerRevision>;
	// DaemonSet: <name>-<ComputeHash(template)>, a hash of the Go value, not of the data).
	Name string `json:"name"`
	// Data is the exact bytes of ControllerRevision.data.
	Data string `json:"data"`
	// Labels of the ControllerRevision.
	Labels map[string]string `json:"labels"`
	// Annotations of the ControllerRevision (CloneSet: the workload's plus the hash of its
	// volumeClaimTemplates).
	Annotations map[string]string `json:"annotations,omitempty"`
}

// QuantityCase is one row of quantities.json.
type QuantityCase struct {
	Input string `json:"input"`
	// Output is MarshalJSON after UnmarshalJSON of the quoted input (unset on error).
	Output string `json:"output,omitempty"`
	// RoundedUpMilli is the output after RoundUp(resource.Milli).
	RoundedUpMilli string `json:"roundedUpMilli,omitempty"`
	Error          string `json:"error,omitempty"`
}

// TemplateCase is one row of templates.json.
type TemplateCase struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output string          `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

var scheme = clientgoscheme.Scheme

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func mustJSON(v interface{}) []byte {
	data, err := json.Marshal(v)
	must(err)
	return data
}

// mutate runs the kruise mutating webhook handler of the kind on a create request and applies
// the patch it answers with, as the API server does.
func mutate(kind, version string, raw []byte) []byte {
	decoder := admission.NewDecoder(scheme)
	var handler admission.Handler
	resource := ""
	switch kind {
	case "CloneSet":
		handler, resource = &clonesetmutating.CloneSetCreateUpdateHandler{Decoder: decoder}, "clonesets"
	case "StatefulSet":
		handler, resource = &statefulsetmutating.StatefulSetCreateUpdateHandler{Decoder: decoder}, "statefulsets"
	case "DaemonSet":
		handler, resource = &daemonsetmutating.DaemonSetCreateUpdateHandler{Decoder: decoder}, "daemonsets"
	default:
		panic("unknown kind " + kind)
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       "fixture",
		Kind:      metav1.GroupVersionKind{Group: "apps.kruise.io", Version: version, Kind: kind},
		Resource:  metav1.GroupVersionResource{Group: "apps.kruise.io", Version: version, Resource: resource},
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}}
	resp := handler.Handle(context.Background(), req)
	if !resp.Allowed {
		panic(fmt.Sprintf("webhook refused %s: %v", kind, resp.Result))
	}
	if len(resp.Patches) == 0 {
		return raw
	}
	patch, err := jsonpatch.DecodePatch(mustJSON(resp.Patches))
	must(err)
	stored, err := patch.Apply(raw)
	must(err)
	return stored
}

// decode reads JSON into a typed object as the apimachinery serializer does.
func decode(data []byte, into runtime.Object) {
	_, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(data, nil, into)
	must(err)
}

// getPatch is upstream's getPatch of Advanced StatefulSet (pkg/controller/statefulset,
// unexported there): the set encoded by the legacy codec, spec.template kept, "$patch".
func statefulSetPatch(set *appsv1beta1.StatefulSet) []byte {
	codec := clientgoscheme.Codecs.LegacyCodec(appsv1beta1.SchemeGroupVersion)
	str, err := runtime.Encode(codec, set)
	must(err)
	var raw map[string]interface{}
	must(json.Unmarshal(str, &raw))
	objCopy := make(map[string]interface{})
	specCopy := make(map[string]interface{})
	spec := raw["spec"].(map[string]interface{})
	template := spec["template"].(map[string]interface{})
	specCopy["template"] = template
	template["$patch"] = "replace"
	objCopy["spec"] = specCopy
	patch, err := json.Marshal(objCopy)
	must(err)
	return patch
}

// daemonSetPatch is upstream's getPatch of Advanced DaemonSet (pkg/controller/daemonset).
func daemonSetPatch(ds *appsv1beta1.DaemonSet) []byte {
	dsBytes, err := json.Marshal(ds)
	must(err)
	var raw map[string]interface{}
	must(json.Unmarshal(dsBytes, &raw))
	objCopy := make(map[string]interface{})
	specCopy := make(map[string]interface{})
	spec := raw["spec"].(map[string]interface{})
	template := spec["template"].(map[string]interface{})
	specCopy["template"] = template
	template["$patch"] = "replace"
	objCopy["spec"] = specCopy
	patch, err := json.Marshal(objCopy)
	must(err)
	return patch
}

func fixture(name string, manifest []byte) Fixture {
	raw, err := yaml.YAMLToJSON(manifest)
	must(err)
	var meta metav1.TypeMeta
	must(json.Unmarshal(raw, &meta))
	version := strings.TrimPrefix(meta.APIVersion, "apps.kruise.io/")
	stored := mutate(meta.Kind, version, raw)
	out := Fixture{Name: name, Manifest: raw, Stored: stored}
	zero := int32(0)

	switch meta.Kind {
	case "CloneSet":
		cs := &appsv1beta1.CloneSet{}
		if version == "v1alpha1" {
			old := &appsv1alpha1.CloneSet{}
			decode(stored, old)
			must(old.ConvertTo(cs))
			cs.APIVersion, cs.Kind = appsv1beta1.GroupVersion.String(), "CloneSet"
			converted := mustJSON(cs)
			cs = &appsv1beta1.CloneSet{}
			decode(converted, cs)
		} else {
			decode(stored, cs)
		}
		out.Controller = mustJSON(cs)
		cr, err := clonesetrevision.NewRevisionControl().NewRevision(cs, 1, &zero)
		must(err)
		out.Revision = Revision{Name: cr.Name, Data: string(cr.Data.Raw), Labels: cr.Labels, Annotations: cr.Annotations}
		pods, err := clonesetcore.New(cs).NewVersionedPods(cs, cs, cr.Name, cr.Name, 1, 0, []string{"abcde"})
		must(err)
		out.PodLabels = pods[0].Labels
	case "StatefulSet":
		set := &appsv1beta1.StatefulSet{}
		if version == "v1alpha1" {
			old := &appsv1alpha1.StatefulSet{}
			decode(stored, old)
			must(old.ConvertTo(set))
			set.APIVersion, set.Kind = appsv1beta1.GroupVersion.String(), "StatefulSet"
			converted := mustJSON(set)
			set = &appsv1beta1.StatefulSet{}
			decode(converted, set)
		} else {
			decode(stored, set)
		}
		out.Controller = mustJSON(set)
		patch := statefulSetPatch(set)
		kind := appsv1beta1.SchemeGroupVersion.WithKind("StatefulSet")
		cr, err := history.NewControllerRevision(set, kind, set.Spec.Template.Labels, runtime.RawExtension{Raw: patch}, 1, &zero)
		must(err)
		out.Revision = Revision{Name: cr.Name, Data: string(cr.Data.Raw), Labels: cr.Labels, Annotations: set.Annotations}
	case "DaemonSet":
		ds := &appsv1beta1.DaemonSet{}
		if version == "v1alpha1" {
			old := &appsv1alpha1.DaemonSet{}
			decode(stored, old)
			must(old.ConvertTo(ds))
			ds.APIVersion, ds.Kind = appsv1beta1.GroupVersion.String(), "DaemonSet"
			converted := mustJSON(ds)
			ds = &appsv1beta1.DaemonSet{}
			decode(converted, ds)
		} else {
			decode(stored, ds)
		}
		out.Controller = mustJSON(ds)
		hash := kubecontroller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
		labels := map[string]string{}
		for k, v := range ds.Spec.Template.Labels {
			labels[k] = v
		}
		labels[apps.DefaultDaemonSetUniqueLabelKey] = hash
		out.Revision = Revision{Name: ds.Name + "-" + hash, Data: string(daemonSetPatch(ds)), Labels: labels, Annotations: ds.Annotations}
	default:
		panic("unknown kind " + meta.Kind)
	}
	return out
}

var quantityInputs = []string{
	"0", "00", "-0", "0.0", ".5", "0.5", "1", "+1", "-1", "1000m", "100m", "+100m", "1500m", "10u", "5u", "1000u",
	"0.0000000001", "1.0000000001", "1n", "1000000n", "1k", "1000", "1024", "1000k", "1000M", "1000G", "1000T",
	"1000P", "1E", "1000E", "1Ki", "1024Ki", "1Mi", "1024Mi", "2048Mi", "1536Mi", "1.5Gi", "0.5Gi", "1.5Ki",
	"0.5Ki", "1023", "1023Ki", "1Gi", "8Gi", "1025Mi", "123456Gi", "1Ei", "8Ei", "1024Ei", "-1Gi", "-1.5Gi",
	"1e3", "1E3", "1e-3", "1e-10", "12e6", "120e4", "1200e3", "1.5e3", "1e0", "1e+3", "1e21", "0.1e1",
	"1.", "1.G", ".", "+", "1.5", "-0.5", "3.14159", "100Mi", "128974848", "129e6", "129M", "123Mi",
	"1Qi", "1K", "1e", "", "1 Gi", "abc", "1.2.3", "1Gi ", " 1Gi", "9223372036854775807", "9223372036854775808",
	"99999999999999999999", "1000000000000000000000m", "0.001m", "1.0001", "-1.0001", "10m",
}

var templateInputs = []struct{ name, json string }{
	{"empty", `{}`},
	{"labels-only", `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx"}]}}`},
	{"nulls", `{"metadata":{"labels":{"a":null},"annotations":null},"spec":{"containers":null,"securityContext":null,"nodeSelector":{}}}`},
	{"unknown-and-later-fields", `{"metadata":{"bogus":1},"spec":{"hostnameOverride":"h","unknownField":true,"containers":[{"name":"c","restartPolicyRules":[{"action":"Restart"}],"lifecycle":{"stopSignal":"SIGTERM"},"env":[{"name":"E","valueFrom":{"fileKeyRef":{"path":"p","key":"k","volumeName":"v"}}}]}]}}`},
	{"empty-values", `{"metadata":{"name":"","labels":{}},"spec":{"containers":[{"name":"c","image":"","env":[],"stdin":false,"ports":[]}],"hostNetwork":false,"priority":0,"volumes":[]}}`},
	{"times", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00.123+02:00","deletionTimestamp":"2024-05-01T10:00:00Z"},"spec":{"containers":[]}}`},
	{"zero-time", `{"metadata":{"creationTimestamp":"0001-01-01T00:00:00Z"},"spec":{"containers":[]}}`},
	{"quantities", `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1000m","memory":"1024Mi","nvidia.com/gpu":1},"requests":{"cpu":0.5,"memory":"1Gi","ephemeral-storage":"1.5Gi"}}}],"overhead":{"cpu":"+100m"},"volumes":[{"name":"v","emptyDir":{"sizeLimit":"2048Mi","medium":""}}]}}`},
	{"int-or-string", `{"spec":{"containers":[{"name":"c","livenessProbe":{"httpGet":{"port":"http"}},"readinessProbe":{"tcpSocket":{"port":8080}},"startupProbe":{"httpGet":{"port":"80"}}}]}}`},
	{"affinity", `{"spec":{"containers":[],"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1},{"weight":2,"preference":{"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}}],"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{}]}},"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname"}}]}}}}`},
	{"pointers-to-zero", `{"spec":{"containers":[],"securityContext":{},"terminationGracePeriodSeconds":0,"automountServiceAccountToken":false,"enableServiceLinks":true,"shareProcessNamespace":false,"hostUsers":false}}`},
	{"html-and-controls", `{"metadata":{"annotations":{"html":"<a href=\"x\">&amp;</a>","ctl":"a\tb\nc\u0001\u007f\u2028\u2029é"}},"spec":{"containers":[]}}`},
	{"big-ints", `{"spec":{"containers":[],"activeDeadlineSeconds":9007199254740993,"terminationGracePeriodSeconds":-1}}`},
	{"volumes", `{"spec":{"containers":[],"volumes":[{"name":"bare"},{"name":"cm","configMap":{"name":"c","items":[{"key":"k","path":"p"}]}},{"name":"s","secret":{"secretName":"s","defaultMode":420}},{"name":"h","hostPath":{"path":"/x","type":""}},{"name":"p","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},{"downwardAPI":{"items":[{"path":"n","fieldRef":{"fieldPath":"metadata.name"}}]}}]}}]}}`},
	{"bytes-and-inline", `{"spec":{"containers":[{"name":"c","securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}],"ephemeralContainers":[{"name":"e","image":"busybox","targetContainerName":"c"}]}}`},
}

func quantities() []QuantityCase {
	var out []QuantityCase
	for _, input := range quantityInputs {
		row := QuantityCase{Input: input}
		var q resource.Quantity
		if err := json.Unmarshal(mustJSON(input), &q); err != nil {
			row.Error = err.Error()
		} else {
			out, err := json.Marshal(q)
			must(err)
			var s string
			must(json.Unmarshal(out, &s))
			row.Output = s
			q.RoundUp(resource.Milli)
			out, err = json.Marshal(q)
			must(err)
			must(json.Unmarshal(out, &s))
			row.RoundedUpMilli = s
		}
		out = append(out, row)
	}
	return out
}

func templates() []TemplateCase {
	var out []TemplateCase
	for _, input := range templateInputs {
		row := TemplateCase{Name: input.name, Input: json.RawMessage(input.json)}
		var template corev1.PodTemplateSpec
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(input.json), &template); err != nil {
			row.Error = err.Error()
		} else {
			row.Output = string(mustJSON(template))
		}
		out = append(out, row)
	}
	return out
}

func write(path string, v interface{}) {
	data, err := json.MarshalIndent(v, "", "  ")
	must(err)
	must(os.WriteFile(path, append(data, '\n'), 0o644))
}

func main() {
	manifests := flag.String("manifests", "", "directory of input manifests (*.yaml)")
	outDir := flag.String("out", "", "directory the fixtures are written to")
	flag.Parse()
	must(apis.AddToScheme(scheme))

	paths, err := filepath.Glob(filepath.Join(*manifests, "*.yaml"))
	must(err)
	sort.Strings(paths)
	for _, path := range paths {
		manifest, err := os.ReadFile(path)
		must(err)
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		write(filepath.Join(*outDir, name+".json"), fixture(name, manifest))
	}
	write(filepath.Join(*outDir, "quantities.json"), quantities())
	write(filepath.Join(*outDir, "templates.json"), templates())
	fmt.Fprintf(os.Stderr, "wrote %d manifest fixtures, quantities.json and templates.json to %s\n", len(paths), *outDir)
}
