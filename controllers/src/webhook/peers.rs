//! Replicas that reach the API server by URL (out-of-cluster managers, the embedded control
//! plane, the scenario harness) each have their own address, so the configurations can point at
//! only one of them at a time. Without a rule they would take turns rewriting the configurations
//! and the CRDs forever, and every CRD write makes the API server restart the watches on that
//! kind. The rule: a replica leaves a configuration that points at another replica's URL alone
//! while that replica accepts connections, and takes it over once it does not. (Replicas behind
//! a Service all write the same Service reference, so none of this applies to them.)

use std::time::Duration;

use serde_json::Value;

use super::configuration::ClientTarget;

/// How long a peer has to accept a TCP connection before it counts as gone.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// The `host:port` of every `clientConfig.url` in `stored` (a webhook configuration or a CRD,
/// as JSON) that is not ours. Empty when we are reached through a Service.
pub fn peer_authorities(stored: &Value, ours: &ClientTarget) -> Vec<String> {
    let ClientTarget::Url(base) = ours else {
        return Vec::new();
    };
    let Some(own) = authority(base) else {
        return Vec::new();
    };
    let mut urls = Vec::new();
    collect_client_config_urls(stored, &mut urls);
    let mut peers: Vec<String> =
        urls.iter().filter_map(|url| authority(url)).filter(|peer| *peer != own).collect();
    peers.sort();
    peers.dedup();
    peers
}

/// `host:port` of an `https://host:port/path` URL (port 443 when absent).
fn authority(url: &str) -> Option<String> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let host_port = rest.split('/').next().filter(|hp| !hp.is_empty())?;
    let has_port = match host_port.rfind(']') {
        Some(bracket) => host_port[bracket..].contains(':'),
        None => host_port.contains(':'),
    };
    Some(if has_port { host_port.to_string() } else { format!("{host_port}:443") })
}

fn collect_client_config_urls(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "clientConfig"
                    && let Some(url) = child.get("url").and_then(Value::as_str)
                {
                    out.push(url.to_string());
                }
                collect_client_config_urls(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_client_config_urls(item, out)),
        _ => {}
    }
}

/// Whether `stored` points at another replica that still accepts connections.
pub async fn held_by_live_peer(stored: &Value, ours: &ClientTarget) -> bool {
    for peer in peer_authorities(stored, ours) {
        let connect = tokio::net::TcpStream::connect(peer.as_str());
        if matches!(tokio::time::timeout(PROBE_TIMEOUT, connect).await, Ok(Ok(_))) {
            tracing::debug!(%peer, "another live replica serves this configuration; leaving it");
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn url(base: &str) -> ClientTarget {
        ClientTarget::Url(base.into())
    }

    #[test]
    fn peers_are_other_url_authorities() {
        let configuration = json!({"webhooks": [
            {"clientConfig": {"url": "https://127.0.0.1:9001/mutate-pod"}},
            {"clientConfig": {"url": "https://127.0.0.1:9001/mutate-cloneset"}},
            {"clientConfig": {"url": "https://127.0.0.1:9002/validate"}},
        ]});
        let crd = json!({"spec": {"conversion": {"webhook": {"clientConfig": {"url": "https://example.test/convert"}}}}});
        let service =
            json!({"webhooks": [{"clientConfig": {"service": {"name": "kruise-webhook-service"}}}]});
        let cases: Vec<(&str, &Value, ClientTarget, Vec<&str>)> = vec![
            (
                "two peers, deduplicated",
                &configuration,
                url("https://127.0.0.1:9003"),
                vec!["127.0.0.1:9001", "127.0.0.1:9002"],
            ),
            (
                "our own address is no peer",
                &configuration,
                url("https://127.0.0.1:9001/"),
                vec!["127.0.0.1:9002"],
            ),
            (
                "a CRD conversion URL without port",
                &crd,
                url("https://127.0.0.1:9001"),
                vec!["example.test:443"],
            ),
            ("a Service reference has no URL", &service, url("https://127.0.0.1:9001"), vec![]),
            (
                "replicas behind a Service have no peers",
                &configuration,
                ClientTarget::Service {
                    namespace: "kruise-system".into(),
                    name: "kruise-webhook-service".into(),
                    port: 443,
                },
                vec![],
            ),
        ];
        for (name, stored, ours, want) in cases {
            assert_eq!(peer_authorities(stored, &ours), want, "{name}");
        }
    }

    #[test]
    fn authority_table() {
        let cases = [
            ("https://127.0.0.1:9443/convert", Some("127.0.0.1:9443")),
            ("https://[::1]:9443/x", Some("[::1]:9443")),
            ("https://[::1]/x", Some("[::1]:443")),
            ("https://host", Some("host:443")),
            ("ftp://host/x", None),
            ("https:///x", None),
        ];
        for (url, want) in cases {
            assert_eq!(authority(url).as_deref(), want, "{url}");
        }
    }

    #[tokio::test]
    async fn a_listening_peer_holds_and_a_closed_one_does_not() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let live = listener.local_addr().unwrap();
        let closed = {
            let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            gone.local_addr().unwrap()
        };
        let ours = url("https://127.0.0.1:1");
        let stored = |addr: std::net::SocketAddr| json!({"webhooks": [{"clientConfig": {"url": format!("https://{addr}/x")}}]});
        assert!(held_by_live_peer(&stored(live), &ours).await);
        assert!(!held_by_live_peer(&stored(closed), &ours).await);
    }
}
