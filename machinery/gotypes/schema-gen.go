// Command schema-gen writes the Go-types schema of the Kubernetes built-in kinds
// (crds/src/gotypes/schema.json): what the embedded API server's protobuf codec and the
// Go-JSON re-marshaller (kruise_crds::gojson) read.
//
// It walks, by reflection, every Go type that client-go's scheme (plus apiextensions v1 and the
// meta.k8s.io/v1 kinds) registers for a GA group version and records, for each struct, each
// field's protobuf number and wire kind, JSON name, omitempty/omitzero, inline, and whether Go holds it
// by pointer: what the codec needs to encode and decode exactly as kube-apiserver's Go types do.
//
// With -base FILE (the output of this program built against an older k8s.io/api, the base),
// each field the base's Go types lack is marked "x", and the program fails unless every other
// field is the same in both apart from omitzero (which the base must not use at all): so a
// reader can reproduce the base's encoding/json behaviour from the one file.
// Run it through generate.sh (next to this file); the output is committed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// Field is one protobuf field of a message.
type Field struct {
	Number    int    `json:"n"`
	JSON      string `json:"j"`
	Type      string `json:"t"`
	Repeated  bool   `json:"r,omitempty"`
	MapKey    string `json:"k,omitempty"`
	Pointer   bool   `json:"p,omitempty"`
	OmitEmpty bool   `json:"o,omitempty"`
	OmitZero  bool   `json:"z,omitempty"`
	Inline    bool   `json:"i,omitempty"`
	// NotInBase: the base version's Go type has no such field (see -base).
	NotInBase bool `json:"x,omitempty"`
	// Declared: the field's position in the Go struct (encoding/json writes fields in that
	// order; the list is sorted by protobuf number).
	Declared int `json:"d,omitempty"`
}

// Message is one struct (or a named slice, wrapped as a message holding its items).
type Message struct {
	Fields []Field `json:"f"`
	// Wrapper: a named slice type whose JSON is the bare array.
	Wrapper bool `json:"w,omitempty"`
	// CustomJSON: the Go type has its own JSON form (the codec must know it by name).
	CustomJSON bool `json:"c,omitempty"`
}

// Schema is the whole output.
type Schema struct {
	// Version and Base: the k8s.io/api versions the schema and its "x" marks come from.
	Version  string             `json:"version,omitempty"`
	Base     string             `json:"base,omitempty"`
	Kinds    map[string]string  `json:"kinds"`
	Messages map[string]Message `json:"messages"`
}

var (
	protoMarshaler = reflect.TypeOf((*interface{ Marshal() ([]byte, error) })(nil)).Elem()
	jsonMarshaler  = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	gaVersion      = regexp.MustCompile(`^v[0-9]+$`)
	out            = Schema{Kinds: map[string]string{}, Messages: map[string]Message{}}
)

func typeName(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// scalar maps a Go kind to the codec's scalar names.
func scalar(t reflect.Type) (string, bool) {
	switch t.Kind() {
	case reflect.String:
		return "string", true
	case reflect.Bool:
		return "bool", true
	case reflect.Int32:
		return "int32", true
	case reflect.Int64:
		return "int64", true
	case reflect.Uint32:
		return "uint32", true
	case reflect.Uint64:
		return "uint64", true
	case reflect.Float64:
		return "float64", true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes", true
		}
	}
	return "", false
}

// elemType names a (non-pointer) element type, walking structs it reaches.
func elemType(t reflect.Type, path string) string {
	if s, ok := scalar(t); ok {
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		walk(t, path)
		return typeName(t)
	case reflect.Slice:
		// A named slice held as one field: a message of its items.
		if t.Name() == "" {
			panic(fmt.Sprintf("%s: unnamed nested slice %v", path, t))
		}
		name := typeName(t)
		if _, seen := out.Messages[name]; !seen {
			out.Messages[name] = Message{Wrapper: true}
			item := elemType(t.Elem(), path+"[]")
			out.Messages[name] = Message{Wrapper: true, Fields: []Field{{Number: 1, JSON: "items", Type: item, Repeated: true}}}
		}
		return name
	}
	panic(fmt.Sprintf("%s: unsupported type %v (%v)", path, t, t.Kind()))
}

func walk(t reflect.Type, path string) {
	name := typeName(t)
	if _, seen := out.Messages[name]; seen {
		return
	}
	if !reflect.PointerTo(t).Implements(protoMarshaler) {
		panic(fmt.Sprintf("%s: %s has no protobuf form", path, name))
	}
	custom := t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)
	out.Messages[name] = Message{CustomJSON: custom}
	fields := []Field{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("protobuf")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		parts := strings.Split(tag, ",")
		if len(parts) < 3 {
			panic(fmt.Sprintf("%s.%s: protobuf tag %q", name, f.Name, tag))
		}
		number, err := strconv.Atoi(parts[1])
		if err != nil {
			panic(fmt.Sprintf("%s.%s: bad protobuf tag %q", name, f.Name, tag))
		}
		field := Field{Number: number, Repeated: parts[2] == "rep", Declared: i}
		jsonTag := f.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(jsonTag, ",")
		if jsonTag == "-" {
			continue
		}
		field.OmitEmpty = strings.Contains(","+opts+",", ",omitempty,")
		field.OmitZero = strings.Contains(","+opts+",", ",omitzero,")
		field.Inline = strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && jsonName == "")
		if jsonName == "" && !field.Inline {
			jsonName = f.Name
		}
		field.JSON = jsonName
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			field.Pointer = true
			ft = ft.Elem()
		}
		fieldPath := name + "." + f.Name
		if ft.Kind() == reflect.Slice && ft.Name() == "" && ft.Elem().Kind() != reflect.Uint8 {
			field.Repeated = true
		}
		switch {
		case ft.Kind() == reflect.Map:
			if ft.Key().Kind() != reflect.String {
				panic(fmt.Sprintf("%s: map key %v", fieldPath, ft.Key()))
			}
			field.MapKey = "string"
			field.Repeated = false
			field.Type = elemType(ft.Elem(), fieldPath)
		case field.Repeated && ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			et := ft.Elem()
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			field.Type = elemType(et, fieldPath)
		case field.Repeated && ft.Kind() == reflect.Slice:
			// repeated bytes
			field.Type = "bytes"
		default:
			field.Repeated = false
			field.Type = elemType(ft, fieldPath)
		}
		fields = append(fields, field)
	}
	sort.Slice(fields, func(a, b int) bool { return fields[a].Number < fields[b].Number })
	out.Messages[name] = Message{Fields: fields, CustomJSON: custom}
}

func add(gvk schema.GroupVersionKind, t reflect.Type) {
	if !reflect.PointerTo(t).Implements(protoMarshaler) {
		return // e.g. meta.k8s.io Table: JSON only, as kube-apiserver serves it
	}
	walk(t, gvk.String())
	out.Kinds[gvk.GroupVersion().String()+"/"+gvk.Kind] = typeName(t)
}

// markBase marks the fields the base schema lacks and checks that the rest agree.
func markBase(baseFile string) {
	data, err := os.ReadFile(baseFile)
	if err != nil {
		panic(err)
	}
	var base Schema
	if err := json.Unmarshal(data, &base); err != nil {
		panic(err)
	}
	for name, message := range base.Messages {
		for _, field := range message.Fields {
			if field.OmitZero {
				panic(fmt.Sprintf("base %s.%s uses omitzero", name, field.JSON))
			}
		}
	}
	for name, message := range out.Messages {
		old, inBase := base.Messages[name]
		if !inBase {
			continue // reachable only through fields marked below
		}
		byNumber := map[int]Field{}
		for _, field := range old.Fields {
			byNumber[field.Number] = field
		}
		for i, field := range message.Fields {
			was, found := byNumber[field.Number]
			if !found {
				message.Fields[i].NotInBase = true
				continue
			}
			delete(byNumber, field.Number)
			was.OmitZero = field.OmitZero
			was.Declared = field.Declared // a field added in the middle moves the ones after it
			if was != field {
				panic(fmt.Sprintf("%s.%s differs from the base: %+v -> %+v", name, field.JSON, was, field))
			}
		}
		if len(byNumber) > 0 {
			panic(fmt.Sprintf("%s: fields of the base are gone: %+v", name, byNumber))
		}
		if old.Wrapper != message.Wrapper || old.CustomJSON != message.CustomJSON {
			panic(fmt.Sprintf("%s: kind of message differs from the base", name))
		}
		out.Messages[name] = message
	}
}

func main() {
	baseFile := flag.String("base", "", "schema written by this program for the base version")
	baseVersion := flag.String("base-version", "", "k8s.io/api version of -base")
	version := flag.String("version", "", "k8s.io/api version this program is built with")
	flag.Parse()
	out.Version = *version
	s := runtime.NewScheme()
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		s.AddKnownTypeWithName(gvk, reflect.New(t).Interface().(runtime.Object))
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	meta := metav1.SchemeGroupVersion
	for _, obj := range []runtime.Object{&metav1.Status{}, &metav1.DeleteOptions{}, &metav1.WatchEvent{},
		&metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{}, &metav1.List{}} {
		t := reflect.TypeOf(obj).Elem()
		s.AddKnownTypeWithName(meta.WithKind(t.Name()), obj)
	}
	for gvk, t := range s.AllKnownTypes() {
		if gaVersion.MatchString(gvk.Version) && gvk.Version != runtime.APIVersionInternal {
			add(gvk, t)
		}
	}
	if *baseFile != "" {
		markBase(*baseFile)
		out.Base = *baseVersion
	}
	encoder := json.NewEncoder(os.Stdout)
	if err := encoder.Encode(out); err != nil {
		panic(err)
	}
}
