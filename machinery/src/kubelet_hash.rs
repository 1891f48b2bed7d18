//! The kubelet's container hash (`HashContainer`) and the Go hashing it is built from:
//! FNV-32a over `hashutil.DeepHashObject(json.Marshal(x))`, i.e. over spew's `%#v` rendering of
//! a byte slice (`([]uint8)[123 34 ...]`), with the JSON written byte for byte as Go's
//! `encoding/json` writes it. The simulated kubelet labels its containers with it and the node
//! daemon and the in-place update engine compare against it, so it has to equal the real
//! kubelet's.

use k8s_openapi::api::core::v1::Container;

const FNV32_OFFSET: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(FNV32_OFFSET, |hash, byte| (hash ^ u32::from(*byte)).wrapping_mul(FNV32_PRIME))
}

/// `hashutil.DeepHashObject(fnv.New32a(), bytes)`: spew renders a byte slice as
/// `([]uint8)[b0 b1 ...]` with decimal bytes, and that text is hashed.
pub fn deep_hash_bytes(bytes: &[u8]) -> u64 {
    let mut text = String::with_capacity(bytes.len() * 4 + 11);
    text.push_str("([]uint8)[");
    for (index, byte) in bytes.iter().enumerate() {
        if index > 0 {
            text.push(' ');
        }
        text.push_str(&byte.to_string());
    }
    text.push(']');
    u64::from(fnv32a(text.as_bytes()))
}

/// A JSON string literal exactly as Go's `encoding/json` writes it (HTML-safe: `<`, `>`, `&`
/// and U+2028/U+2029 are escaped; control characters use `\b \f \n \r \t` or `\u00xx`).
pub fn go_json_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for ch in value.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", u32::from(ch))),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The kubelet's container hash since Kubernetes 1.31 (`HashContainer`): only the name and
/// the image count, as `{"image":...,"name":...}` (Go sorts map keys).
pub fn kubelet_container_hash(container: &Container) -> u64 {
    let image = container.image.as_deref().unwrap_or_default();
    let json =
        format!("{{\"image\":{},\"name\":{}}}", go_json_string(image), go_json_string(&container.name));
    deep_hash_bytes(json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubelet_hash_matches_kubernetes_golden_value() {
        // Kubernetes pkg/kubelet/container TestHashContainer (1.31+): name + image only.
        let container = Container {
            name: "test_container".into(),
            image: Some("foo/image:v1".into()),
            args: Some(vec!["/bin/sh".into(), "-c".into(), "echo abc".into()]),
            ..Default::default()
        };
        assert_eq!(kubelet_container_hash(&container), 0x8e45_cbd0);
    }

    #[test]
    fn go_string_escaping() {
        let cases = [
            ("plain", "\"plain\""),
            ("a<b>&c", "\"a\\u003cb\\u003e\\u0026c\""),
            ("q\"\\", "\"q\\\"\\\\\""),
            ("\n\t\r\u{8}\u{c}\u{1}", "\"\\n\\t\\r\\b\\f\\u0001\""),
            ("\u{2028}é", "\"\\u2028é\""),
        ];
        for (input, expected) in cases {
            assert_eq!(go_json_string(input), expected, "{input:?}");
        }
    }
}
