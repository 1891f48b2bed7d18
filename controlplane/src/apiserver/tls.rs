//! A self-signed CA and a serving certificate for `localhost`/`127.0.0.1`, for running the API
//! server over HTTPS (the CA goes into the kubeconfig).

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, SanType};

/// PEM material of a generated serving setup.
pub struct ServingCerts {
    /// CA certificate (PEM), trusted by clients.
    pub ca_pem: String,
    /// Server certificate chain (PEM).
    pub cert_pem: String,
    /// Server private key (PEM).
    pub key_pem: String,
}

/// Why certificates could not be made or loaded.
#[derive(Debug, thiserror::Error)]
#[error("TLS setup: {0}")]
pub struct TlsError(pub String);

/// Generates a CA and a serving certificate valid for localhost and 127.0.0.1.
pub fn generate() -> Result<ServingCerts, TlsError> {
    let err = |e: rcgen::Error| TlsError(e.to_string());
    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.distinguished_name.push(DnType::CommonName, "kruise-rs embedded control plane CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).map_err(err)?;

    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).map_err(err)?;
    params.subject_alt_names.push(SanType::IpAddress(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)));
    params.distinguished_name.push(DnType::CommonName, "kube-apiserver");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let cert = params.signed_by(&key, &issuer).map_err(err)?;
    Ok(ServingCerts { ca_pem: ca.pem(), cert_pem: cert.pem(), key_pem: key.serialize_pem() })
}

/// A rustls server configuration for the given PEM material.
pub fn server_config(certs: &ServingCerts) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain: Vec<_> = rustls_pemfile::certs(&mut certs.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError(e.to_string()))?;
    let key = rustls_pemfile::private_key(&mut certs.key_pem.as_bytes())
        .map_err(|e| TlsError(e.to_string()))?
        .ok_or_else(|| TlsError("no private key".into()))?;
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| TlsError(e.to_string()))?;
    Ok(Arc::new(config))
}

/// Serves `router` over HTTPS on `listener` until `shutdown` completes.
pub async fn serve_https(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    config: Arc<rustls::ServerConfig>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else { continue };
        let acceptor = acceptor.clone();
        let router = router.clone();
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(stream).await else { return };
            let service =
                hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let router = router.clone();
                    async move {
                        use tower::ServiceExt;
                        router.oneshot(request.map(axum::body::Body::new)).await
                    }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                .serve_connection_with_upgrades(io, service)
                .await;
        });
    }
}
