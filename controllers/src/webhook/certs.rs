//! The webhook's certificates: a self-made CA and a serving certificate signed by it, kept in
//! one Secret so that every replica and every restart serves the same chain and the API server
//! keeps trusting the same `caBundle` (upstream `pkg/webhook/util/writer` and `generator`).
//!
//! The decisions are pure functions of the Secret's data and the clock ([`check`],
//! [`generate`]); [`ensure_secret`] is the thin I/O shell: read, create when absent (another
//! replica may win the race: then its certificates are used), replace when invalid (guarded by
//! the resourceVersion, so two replicas never overwrite each other's fresh certificates).
//!
//! The Secret uses upstream's data keys (`ca-cert.pem`, `ca-key.pem`, `cert.pem`, `key.pem`,
//! `tls.crt`, `tls.key`), so a Secret written by upstream Kruise is read too; its RSA CA
//! cannot be reused for signing here, so such a Secret is regenerated once it needs renewing or
//! lacks a name this server needs.

use std::{
    collections::BTreeMap,
    net::IpAddr,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use k8s_openapi::{
    ByteString,
    api::core::v1::{Namespace, Secret},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::api::{Api, PostParams};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType, SerialNumber,
};
use rustls::{
    RootCertStore,
    client::{WebPkiServerVerifier, danger::ServerCertVerifier},
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime},
    sign::CertifiedKey,
};

use crate::ControllerError;

/// Secret data key of the CA certificate (PEM); its base64 is the `caBundle`.
pub const CA_CERT_KEY: &str = "ca-cert.pem";
/// Secret data key of the CA private key (PEM).
pub const CA_KEY_KEY: &str = "ca-key.pem";
/// Secret data key of the serving certificate (PEM).
pub const CERT_KEY: &str = "cert.pem";
/// Secret data key of the serving private key (PEM).
pub const KEY_KEY: &str = "key.pem";
/// Second name of the serving certificate, as `kubernetes.io/tls` tools expect it.
pub const TLS_CERT_KEY: &str = "tls.crt";
/// Second name of the serving key.
pub const TLS_KEY_KEY: &str = "tls.key";

/// Common name of the CA this server makes (also how a reusable CA is recognised).
pub const CA_COMMON_NAME: &str = "kruise-webhook-ca";
/// How long a new CA is valid (as upstream's client-go CA: ten years).
const CA_VALIDITY_DAYS: i64 = 3650;
/// How long a new serving certificate is valid.
const SERVING_VALIDITY_DAYS: i64 = 365;
/// A CA is reused for a new serving certificate only when it stays valid this much longer
/// (upstream: one year), so that the new certificate never outlives its issuer's usefulness.
const CA_REUSE_MARGIN: Duration = Duration::from_secs(365 * 24 * 3600);
/// Upstream's default `CERTS_RENEW_BEFORE`: renew six months ahead.
pub const DEFAULT_RENEW_BEFORE: Duration = Duration::from_secs(6 * 30 * 24 * 3600);

/// Why certificate material could not be made, loaded or checked.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// rcgen refused the parameters or a key.
    #[error("generating certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// The PEM text holds no usable certificate or key.
    #[error("{0}")]
    Pem(String),
    /// rustls refused the key or certificate.
    #[error("loading certificates: {0}")]
    Rustls(#[from] rustls::Error),
}

impl From<CertError> for ControllerError {
    fn from(error: CertError) -> Self {
        ControllerError::Tls(error.to_string())
    }
}

/// The PEM material kept in the Secret.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertArtifacts {
    /// CA certificate; its base64 is the `caBundle` of the webhook configurations and CRDs.
    pub ca_cert_pem: String,
    /// CA private key, so that any replica can sign a renewed serving certificate.
    pub ca_key_pem: String,
    /// Serving certificate.
    pub cert_pem: String,
    /// Serving private key.
    pub key_pem: String,
}

/// The names the serving certificate must cover: the webhook Service's DNS names, `localhost`,
/// and whatever hosts and IPs the server is reached at outside a cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServingNames {
    /// DNS subject alternative names.
    pub dns: Vec<String>,
    /// IP subject alternative names.
    pub ips: Vec<IpAddr>,
}

impl ServingNames {
    /// The names for Service `service` in `namespace` plus `extra_hosts` (each a DNS name or an
    /// IP literal) and `extra_ips`, without duplicates and in a stable order.
    pub fn for_service(service: &str, namespace: &str, extra_hosts: &[String], extra_ips: &[IpAddr]) -> Self {
        let mut dns = vec![
            service.to_string(),
            format!("{service}.{namespace}"),
            format!("{service}.{namespace}.svc"),
            format!("{service}.{namespace}.svc.cluster.local"),
            "localhost".to_string(),
        ];
        let mut ips: Vec<IpAddr> = Vec::new();
        for host in extra_hosts {
            match host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                Ok(ip) => ips.push(ip),
                Err(_) if !host.is_empty() => dns.push(host.clone()),
                Err(_) => {}
            }
        }
        ips.extend(extra_ips.iter().copied());
        let mut seen = std::collections::HashSet::new();
        dns.retain(|name| seen.insert(name.clone()));
        let mut seen_ips = std::collections::HashSet::new();
        ips.retain(|ip| seen_ips.insert(*ip));
        Self { dns, ips }
    }
}

/// Why the stored certificates cannot be kept (for the log line that announces a renewal).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertProblem {
    /// A data key is missing or empty.
    #[error("the secret lacks {0}")]
    Missing(&'static str),
    /// The PEM text or key does not parse, or key and certificate do not belong together.
    #[error("unusable certificate or key: {0}")]
    Unusable(String),
    /// The serving certificate does not chain to the stored CA, is expired at the renewal
    /// horizon, or lacks a required name (webpki's verdict for that name).
    #[error("serving certificate not valid for {name} until the renewal horizon: {reason}")]
    NotValidFor {
        /// The DNS name or IP checked.
        name: String,
        /// What webpki reported.
        reason: String,
    },
    /// The CA itself expires before the renewal horizon.
    #[error("the CA expires before the renewal horizon")]
    CaExpiring,
}

/// Checks stored certificates at `horizon` (now + the renewal margin): key and certificate
/// belong together, the serving certificate chains to the CA and is valid for every name in
/// `names` at `horizon`, and the CA is still valid then. `Ok` means keep them.
pub fn check(
    artifacts: &CertArtifacts,
    names: &ServingNames,
    horizon: SystemTime,
) -> Result<(), CertProblem> {
    for (key, value) in [
        (CA_CERT_KEY, &artifacts.ca_cert_pem),
        (CA_KEY_KEY, &artifacts.ca_key_pem),
        (CERT_KEY, &artifacts.cert_pem),
        (KEY_KEY, &artifacts.key_pem),
    ] {
        if value.trim().is_empty() {
            return Err(CertProblem::Missing(key));
        }
    }
    let unusable = |error: CertError| CertProblem::Unusable(error.to_string());
    let serving = certified_key(artifacts).map_err(unusable)?;
    let ca = first_certificate(&artifacts.ca_cert_pem).map_err(unusable)?;
    let horizon_secs = unix_seconds(horizon);
    match certificate_validity(&ca) {
        Some((_, not_after)) if not_after >= horizon_secs => {}
        Some(_) => return Err(CertProblem::CaExpiring),
        None => return Err(CertProblem::Unusable("the CA certificate cannot be parsed".into())),
    }
    let mut roots = RootCertStore::empty();
    roots.add(ca).map_err(|error| CertProblem::Unusable(format!("the CA certificate: {error}")))?;
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), crypto_provider())
        .build()
        .map_err(|error| CertProblem::Unusable(error.to_string()))?;
    let Some(end_entity) = serving.cert.first() else {
        return Err(CertProblem::Missing(CERT_KEY));
    };
    let now = UnixTime::since_unix_epoch(Duration::from_secs(horizon_secs.max(0).unsigned_abs()));
    let dns = names.dns.iter().map(|name| (name.clone(), ServerName::try_from(name.clone()).ok()));
    let ips = names.ips.iter().map(|ip| (ip.to_string(), Some(ServerName::IpAddress((*ip).into()))));
    for (label, server_name) in dns.chain(ips) {
        let Some(server_name) = server_name else {
            return Err(CertProblem::NotValidFor { name: label, reason: "not a valid DNS name".into() });
        };
        if let Err(error) =
            verifier.verify_server_cert(end_entity, &serving.cert[1..], &server_name, &[], now)
        {
            return Err(CertProblem::NotValidFor { name: label, reason: error.to_string() });
        }
    }
    Ok(())
}

/// Makes a serving certificate for `names`, valid from yesterday (clock skew) for a year. The
/// CA of `existing` is reused when it is one of ours and stays valid for at least another year
/// after `now`; otherwise a new CA is made (and the `caBundle` changes).
pub fn generate(
    names: &ServingNames,
    existing: Option<&CertArtifacts>,
    now: SystemTime,
) -> Result<CertArtifacts, CertError> {
    let today = unix_seconds(now).div_euclid(86_400);
    let reusable = existing.and_then(|artifacts| reusable_ca(artifacts, now));
    let (ca_params, ca_key, ca_cert_pem) = match reusable {
        Some(found) => found,
        None => {
            let key = KeyPair::generate()?;
            let params = ca_params(today - 1, today + CA_VALIDITY_DAYS)?;
            let cert = params.self_signed(&key)?;
            (params, key, cert.pem())
        }
    };
    let ca_key_pem = ca_key.serialize_pem();
    let issuer = Issuer::new(ca_params, ca_key);

    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, names.dns.get(2).cloned().unwrap_or_default());
    for name in &names.dns {
        params.subject_alt_names.push(SanType::DnsName(name.as_str().try_into()?));
    }
    for ip in &names.ips {
        params.subject_alt_names.push(SanType::IpAddress(*ip));
    }
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.serial_number = Some(random_serial());
    set_validity(&mut params, today - 1, today + SERVING_VALIDITY_DAYS);
    let cert = params.signed_by(&key, &issuer)?;
    Ok(CertArtifacts { ca_cert_pem, ca_key_pem, cert_pem: cert.pem(), key_pem: key.serialize_pem() })
}

/// The serving chain and key in the form rustls serves (fails when they do not belong together).
pub fn certified_key(artifacts: &CertArtifacts) -> Result<Arc<CertifiedKey>, CertError> {
    let chain: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut artifacts.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|error| CertError::Pem(format!("serving certificate: {error}")))?;
    if chain.is_empty() {
        return Err(CertError::Pem("no serving certificate in the PEM text".into()));
    }
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut artifacts.key_pem.as_bytes())
        .map_err(|error| CertError::Pem(format!("serving key: {error}")))?
        .ok_or_else(|| CertError::Pem("no serving key in the PEM text".into()))?;
    Ok(Arc::new(CertifiedKey::from_der(chain, key, &crypto_provider())?))
}

/// The `caBundle` value: the CA certificate's PEM bytes (base64-encoded on the wire by the
/// `ByteString` type).
pub fn ca_bundle(artifacts: &CertArtifacts) -> ByteString {
    ByteString(artifacts.ca_cert_pem.clone().into_bytes())
}

/// Reads the artifacts out of a Secret's data (absent keys read as empty).
pub fn artifacts_from_secret(secret: &Secret) -> CertArtifacts {
    let read = |key: &str| {
        secret
            .data
            .as_ref()
            .and_then(|data| data.get(key))
            .map(|bytes| String::from_utf8_lossy(&bytes.0).into_owned())
            .unwrap_or_default()
    };
    CertArtifacts {
        ca_cert_pem: read(CA_CERT_KEY),
        ca_key_pem: read(CA_KEY_KEY),
        cert_pem: read(CERT_KEY),
        key_pem: read(KEY_KEY),
    }
}

/// The Secret holding `artifacts` (upstream's keys, the serving pair twice).
pub fn secret_for(namespace: &str, name: &str, artifacts: &CertArtifacts) -> Secret {
    let bytes = |text: &str| ByteString(text.as_bytes().to_vec());
    let data: BTreeMap<String, ByteString> = [
        (CA_CERT_KEY, bytes(&artifacts.ca_cert_pem)),
        (CA_KEY_KEY, bytes(&artifacts.ca_key_pem)),
        (CERT_KEY, bytes(&artifacts.cert_pem)),
        (KEY_KEY, bytes(&artifacts.key_pem)),
        (TLS_CERT_KEY, bytes(&artifacts.cert_pem)),
        (TLS_KEY_KEY, bytes(&artifacts.key_pem)),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect();
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some([("app.kubernetes.io/managed-by".to_string(), "kruise-webhook".to_string())].into()),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    }
}

/// Where the certificates live and what they must cover.
#[derive(Clone, Debug)]
pub struct CertSecretSpec {
    /// Namespace of the Secret (the manager's namespace).
    pub namespace: String,
    /// Name of the Secret.
    pub name: String,
    /// Names the serving certificate must cover.
    pub names: ServingNames,
    /// Renew this long before the serving certificate or the CA expires.
    pub renew_before: Duration,
}

/// Returns valid certificates from the Secret, creating it when absent and replacing its data
/// when the certificates are invalid, expiring within `renew_before` or miss a name. Races with
/// other replicas are settled by the API server: a lost create or replace re-reads the winner's
/// Secret and checks that instead.
pub async fn ensure_secret(
    client: &kube::Client,
    spec: &CertSecretSpec,
) -> Result<CertArtifacts, ControllerError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), &spec.namespace);
    for _attempt in 0..5 {
        let now = SystemTime::now();
        let horizon = now + spec.renew_before;
        match api.get_opt(&spec.name).await? {
            None => {
                let artifacts = generate(&spec.names, None, now)?;
                let secret = secret_for(&spec.namespace, &spec.name, &artifacts);
                match api.create(&PostParams::default(), &secret).await {
                    Ok(_) => {
                        tracing::info!(namespace = %spec.namespace, secret = %spec.name, "created the webhook certificate secret");
                        return Ok(artifacts);
                    }
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        tracing::info!(secret = %spec.name, "another replica created the certificate secret first; reading it");
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            Some(secret) => {
                let stored = artifacts_from_secret(&secret);
                let problem = match check(&stored, &spec.names, horizon) {
                    Ok(()) => return Ok(stored),
                    Err(problem) => problem,
                };
                tracing::info!(secret = %spec.name, %problem, "renewing the webhook certificates");
                let artifacts = generate(&spec.names, Some(&stored), now)?;
                let mut renewed = secret_for(&spec.namespace, &spec.name, &artifacts);
                renewed.metadata.resource_version = secret.metadata.resource_version.clone();
                renewed.metadata.labels = merged(secret.metadata.labels.clone(), renewed.metadata.labels);
                renewed.metadata.annotations = secret.metadata.annotations.clone();
                renewed.type_ = secret.type_.clone();
                match api.replace(&spec.name, &PostParams::default(), &renewed).await {
                    Ok(_) => return Ok(artifacts),
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        tracing::info!(secret = %spec.name, "the certificate secret changed meanwhile; re-reading it");
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                }
            }
        }
    }
    Err(ControllerError::Tls(format!(
        "could not settle the certificate secret {}/{} after repeated conflicts",
        spec.namespace, spec.name
    )))
}

/// Creates `namespace` when it does not exist (labelled `control-plane: controller-manager`,
/// as upstream's `kruise-system`, so that the pod webhook's namespace selector exempts it).
pub async fn ensure_namespace(client: &kube::Client, namespace: &str) -> Result<(), ControllerError> {
    let api: Api<Namespace> = Api::all(client.clone());
    if api.get_opt(namespace).await?.is_some() {
        return Ok(());
    }
    let object = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.to_string()),
            labels: Some([("control-plane".to_string(), "controller-manager".to_string())].into()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

fn merged(
    base: Option<BTreeMap<String, String>>,
    extra: Option<BTreeMap<String, String>>,
) -> Option<BTreeMap<String, String>> {
    let mut map = base.unwrap_or_default();
    map.extend(extra.unwrap_or_default());
    (!map.is_empty()).then_some(map)
}

fn crypto_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn ca_params(from_day: i64, to_day: i64) -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, CA_COMMON_NAME);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    set_validity(&mut params, from_day, to_day);
    Ok(params)
}

/// The stored CA as an issuer, when it is ours (our common name, a key rcgen can sign with) and
/// valid for at least [`CA_REUSE_MARGIN`] more.
fn reusable_ca(artifacts: &CertArtifacts, now: SystemTime) -> Option<(CertificateParams, KeyPair, String)> {
    let der = first_certificate(&artifacts.ca_cert_pem).ok()?;
    let (not_before, not_after) = certificate_validity(&der)?;
    if not_after < unix_seconds(now + CA_REUSE_MARGIN) {
        return None;
    }
    if subject_common_name(&der).as_deref() != Some(CA_COMMON_NAME) {
        return None;
    }
    let key = KeyPair::from_pem(&artifacts.ca_key_pem).ok()?;
    let params = ca_params(not_before.div_euclid(86_400), not_after.div_euclid(86_400)).ok()?;
    Some((params, key, artifacts.ca_cert_pem.clone()))
}

fn first_certificate(pem: &str) -> Result<CertificateDer<'static>, CertError> {
    rustls_pemfile::certs(&mut pem.as_bytes())
        .next()
        .ok_or_else(|| CertError::Pem("no certificate in the PEM text".into()))?
        .map_err(|error| CertError::Pem(error.to_string()))
}

fn random_serial() -> SerialNumber {
    let mut bytes: [u8; 16] = rand::random();
    bytes[0] &= 0x7f; // a positive INTEGER
    SerialNumber::from_slice(&bytes)
}

fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(elapsed) => i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// Sets the validity to midnight UTC of two day counts since the Unix epoch.
fn set_validity(params: &mut CertificateParams, from_day: i64, to_day: i64) {
    let at = |day: i64| {
        let (year, month, day) = civil_from_days(day);
        rcgen::date_time_ymd(year, month, day)
    };
    params.not_before = at(from_day);
    params.not_after = at(to_day);
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01 (inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (
        i32::try_from(year).unwrap_or(i32::MAX),
        u8::try_from(month).unwrap_or(1),
        u8::try_from(day).unwrap_or(1),
    )
}

/// One DER element: (tag, contents, remaining input).
fn der_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        (bytes.iter().fold(0usize, |acc, &b| (acc << 8) | usize::from(b)), rest)
    };
    if rest.len() < length {
        return None;
    }
    let (contents, rest) = rest.split_at(length);
    Some((tag, contents, rest))
}

/// The elements of `TBSCertificate` up to and including the subject: (issuer, validity, subject).
fn tbs_fields(der: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    const SEQUENCE: u8 = 0x30;
    let (tag, certificate, _) = der_element(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, tbs, _) = der_element(certificate)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, _, mut rest) = der_element(tbs)?;
    if tag == 0xa0 {
        // [0] EXPLICIT version; the serial number follows.
        let (_, _, after_serial) = der_element(rest)?;
        rest = after_serial;
    }
    let (_, _, rest) = der_element(rest)?; // signature AlgorithmIdentifier
    let (_, issuer, rest) = der_element(rest)?;
    let (tag, validity, rest) = der_element(rest)?;
    if tag != SEQUENCE {
        return None;
    }
    let (_, subject, _) = der_element(rest)?;
    Some((issuer, validity, subject))
}

/// `notBefore` and `notAfter` of a DER certificate, in seconds since the Unix epoch.
pub fn certificate_validity(der: &[u8]) -> Option<(i64, i64)> {
    let (_, validity, _) = tbs_fields(der)?;
    let (tag_before, before, rest) = der_element(validity)?;
    let (tag_after, after, _) = der_element(rest)?;
    Some((parse_time(tag_before, before)?, parse_time(tag_after, after)?))
}

/// The first common name in a DER certificate's subject.
fn subject_common_name(der: &[u8]) -> Option<String> {
    const COMMON_NAME_OID: &[u8] = &[0x55, 0x04, 0x03];
    let (_, _, subject) = tbs_fields(der)?;
    let mut sets = subject;
    while let Some((_, set, rest)) = der_element(sets) {
        sets = rest;
        let mut attributes = set;
        while let Some((_, attribute, rest)) = der_element(attributes) {
            attributes = rest;
            let (_, oid, value) = der_element(attribute)?;
            if oid == COMMON_NAME_OID {
                let (_, text, _) = der_element(value)?;
                return Some(String::from_utf8_lossy(text).into_owned());
            }
        }
    }
    None
}

/// Parses a DER `UTCTime` (tag 0x17, `YYMMDDHHMMSSZ`) or `GeneralizedTime` (tag 0x18,
/// `YYYYMMDDHHMMSSZ`) into seconds since the Unix epoch.
fn parse_time(tag: u8, text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?;
    let digits = text.strip_suffix('Z')?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| digits.get(range)?.parse::<i64>().ok();
    let (year, rest) = match (tag, digits.len()) {
        (0x17, 12) => {
            let short = number(0..2)?;
            (if short >= 50 { 1900 + short } else { 2000 + short }, 2)
        }
        (0x18, 14) => (number(0..4)?, 4),
        _ => return None,
    };
    let month = number(rest..rest + 2)?;
    let day = number(rest + 2..rest + 4)?;
    let hour = number(rest + 4..rest + 6)?;
    let minute = number(rest + 6..rest + 8)?;
    let second = number(rest + 8..rest + 10)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn names() -> ServingNames {
        ServingNames::for_service("kruise-webhook-service", "kruise-system", &["127.0.0.1".into()], &[])
    }

    #[test]
    fn serving_names_cover_the_service_and_extras() {
        let names = ServingNames::for_service(
            "svc",
            "ns",
            &["127.0.0.1".into(), "[::1]".into(), "hook.example.com".into(), "svc".into(), String::new()],
            &["127.0.0.1".parse().unwrap(), "10.0.0.1".parse().unwrap()],
        );
        assert_eq!(
            names.dns,
            ["svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local", "localhost", "hook.example.com"]
        );
        let ips: Vec<String> = names.ips.iter().map(ToString::to_string).collect();
        assert_eq!(ips, ["127.0.0.1", "::1", "10.0.0.1"]);
    }

    #[test]
    fn civil_dates_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        for day in (-800_000..800_000).step_by(997) {
            let (year, month, date) = civil_from_days(day);
            assert_eq!(days_from_civil(year.into(), month.into(), date.into()), day);
        }
    }

    #[test]
    fn der_times_table() {
        let cases: [(u8, &str, Option<i64>); 7] = [
            (0x17, "700101000000Z", Some(0)),
            (0x17, "491231235959Z", Some(days_from_civil(2049, 12, 31) * 86_400 + 86_399)),
            (0x17, "500101000000Z", Some(days_from_civil(1950, 1, 1) * 86_400)),
            (0x18, "40960101000000Z", Some(days_from_civil(4096, 1, 1) * 86_400)),
            (0x18, "700101000000Z", None),
            (0x17, "701301000000Z", None),
            (0x17, "7001010000+0100", None),
        ];
        for (tag, text, expected) in cases {
            assert_eq!(parse_time(tag, text.as_bytes()), expected, "{text}");
        }
        assert_eq!(der_element(&[0x30, 0x82, 0x01]), None);
        assert_eq!(certificate_validity(b"not a certificate"), None);
    }

    #[test]
    fn generated_certificates_check_out_until_they_near_expiry() {
        let now = SystemTime::now();
        let artifacts = generate(&names(), None, now).unwrap();
        assert_eq!(check(&artifacts, &names(), now), Ok(()));
        assert_eq!(check(&artifacts, &names(), now + DEFAULT_RENEW_BEFORE), Ok(()));

        let ca = first_certificate(&artifacts.ca_cert_pem).unwrap();
        assert_eq!(subject_common_name(&ca).as_deref(), Some(CA_COMMON_NAME));
        let (from, to) = certificate_validity(&ca).unwrap();
        assert_eq!((to - from) / 86_400, CA_VALIDITY_DAYS + 1);

        let more =
            ServingNames::for_service("kruise-webhook-service", "kruise-system", &["10.1.2.3".into()], &[]);
        assert!(
            matches!(check(&artifacts, &more, now), Err(CertProblem::NotValidFor { name, .. }) if name == "10.1.2.3")
        );
        let other_service = ServingNames::for_service("other", "kruise-system", &[], &[]);
        assert!(
            matches!(check(&artifacts, &other_service, now), Err(CertProblem::NotValidFor { name, .. }) if name == "other")
        );
        assert!(matches!(check(&artifacts, &names(), now + 400 * DAY), Err(CertProblem::NotValidFor { .. })));
        assert_eq!(check(&artifacts, &names(), now + 4000 * DAY), Err(CertProblem::CaExpiring));

        let mut missing = artifacts.clone();
        missing.ca_key_pem.clear();
        assert_eq!(check(&missing, &names(), now), Err(CertProblem::Missing(CA_KEY_KEY)));
        let other = generate(&names(), None, now).unwrap();
        let mut mismatched = artifacts.clone();
        mismatched.key_pem = other.key_pem.clone();
        assert!(matches!(check(&mismatched, &names(), now), Err(CertProblem::Unusable(_))));
        let mut foreign_ca = artifacts.clone();
        foreign_ca.ca_cert_pem = other.ca_cert_pem.clone();
        assert!(matches!(check(&foreign_ca, &names(), now), Err(CertProblem::NotValidFor { .. })));
        let mut garbage = artifacts;
        garbage.cert_pem = "garbage".into();
        assert!(matches!(check(&garbage, &names(), now), Err(CertProblem::Unusable(_))));
    }

    #[test]
    fn renewal_keeps_a_healthy_ca_and_replaces_a_dying_one() {
        let now = SystemTime::now();
        let first = generate(&names(), None, now).unwrap();
        let more =
            ServingNames::for_service("kruise-webhook-service", "kruise-system", &["10.1.2.3".into()], &[]);
        let renewed = generate(&more, Some(&first), now).unwrap();
        assert_eq!(renewed.ca_cert_pem, first.ca_cert_pem);
        assert_eq!(renewed.ca_key_pem, first.ca_key_pem);
        assert_ne!(renewed.cert_pem, first.cert_pem);
        assert_eq!(check(&renewed, &more, now + DEFAULT_RENEW_BEFORE), Ok(()));

        let late = now + 3400 * DAY;
        let replaced = generate(&names(), Some(&first), late).unwrap();
        assert_ne!(replaced.ca_cert_pem, first.ca_cert_pem);
        assert_eq!(check(&replaced, &names(), late), Ok(()));
    }

    #[test]
    fn secrets_round_trip() {
        let artifacts = generate(&names(), None, SystemTime::now()).unwrap();
        let secret = secret_for("kruise-system", "kruise-webhook-certs", &artifacts);
        let data = secret.data.as_ref().unwrap();
        assert_eq!(data[TLS_CERT_KEY], data[CERT_KEY]);
        assert_eq!(data[TLS_KEY_KEY], data[KEY_KEY]);
        assert_eq!(artifacts_from_secret(&secret), artifacts);
        assert_eq!(artifacts_from_secret(&Secret::default()), CertArtifacts::default());
        assert_eq!(ca_bundle(&artifacts).0, artifacts.ca_cert_pem.as_bytes());
        assert!(certified_key(&artifacts).is_ok());
    }
}
