//! Certificates and keys for a real control plane, made with `rcgen` (ECDSA P-256, as envtest's
//! TinyCA does): one CA that signs the serving certificate shared by kube-apiserver,
//! kube-controller-manager and kube-scheduler (SANs `localhost` and `127.0.0.1`), and a separate
//! key pair that signs and verifies service-account tokens.

use std::net::{IpAddr, Ipv4Addr};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

use crate::HarnessError;

/// PEM material of one control plane.
pub struct ControlPlaneCerts {
    /// The CA certificate clients trust; also `--client-ca-file` and `--root-ca-file`.
    pub ca_cert: String,
    /// The CA's private key (used by kube-controller-manager to sign CSRs).
    pub ca_key: String,
    /// The serving certificate for loopback.
    pub serving_cert: String,
    /// Its private key.
    pub serving_key: String,
    /// The service-account signing key (PKCS#8).
    pub sa_key: String,
    /// Its public half, for verifying tokens.
    pub sa_public: String,
}

/// Generates a fresh set.
pub fn generate() -> Result<ControlPlaneCerts, HarnessError> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.distinguished_name.push(DnType::CommonName, "kruise-it real control plane CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let ca_key_pem = ca_key.serialize_pem();

    let serving_key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params.subject_alt_names.push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    params.distinguished_name.push(DnType::CommonName, "kube-apiserver");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let issuer = Issuer::new(ca_params, ca_key);
    let serving_cert = params.signed_by(&serving_key, &issuer)?;

    let sa_key = KeyPair::generate()?;
    Ok(ControlPlaneCerts {
        ca_cert: ca_cert.pem(),
        ca_key: ca_key_pem,
        serving_cert: serving_cert.pem(),
        serving_key: serving_key.serialize_pem(),
        sa_key: sa_key.serialize_pem(),
        sa_public: sa_key.public_key_pem(),
    })
}
