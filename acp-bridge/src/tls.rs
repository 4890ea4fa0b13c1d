//! TLS for the examples, with rustls and its `ring` provider (no OpenSSL):
//! the client side of `acp-client --connect wss://…` and the server side of
//! `acp-bridge --tls-cert FILE --tls-key FILE`. Certificates and keys are
//! read from PEM files.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate of a PEM file (a chain, or a CA bundle).
///
/// # Errors
///
/// One line naming the file: unreadable, not PEM, or no certificate in it.
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let what = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| what(&pem_error(e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| what(&pem_error(e)))?;
    if certs.is_empty() {
        return Err(what(&"no certificate (-----BEGIN CERTIFICATE-----) in it"));
    }
    Ok(certs)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
///
/// # Errors
///
/// One line naming the file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            format!("{}: no private key in it", path.display())
        }
        e => format!("{}: {}", path.display(), pem_error(e)),
    })
}

fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        e => format!("bad PEM: {e:?}"),
    }
}

/// The ALPN protocols of an HTTP server speaking both versions, preferred
/// first: HTTP/2, then HTTP/1.1.
pub const ALPN_HTTP: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// A server configuration presenting the chain of `cert` (leaf first) with
/// the key in `key`, offering HTTP/2 and HTTP/1.1 by ALPN ([`ALPN_HTTP`]);
/// a client that names no protocol speaks what it starts with.
///
/// # Errors
///
/// Unreadable files, or a key that does not match the certificate.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let chain = load_certs(cert)?;
    let key_der = load_key(key)?;
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("tls: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| format!("{} / {}: {e}", cert.display(), key.display()))?;
    config.alpn_protocols = ALPN_HTTP.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// A client configuration trusting the CA certificates in `ca` (PEM) when
/// given, else the public web roots (the Mozilla set in `webpki-roots`).
///
/// # Errors
///
/// An unreadable CA file, or one without a usable certificate.
pub fn client_config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    match ca {
        Some(path) => {
            for cert in load_certs(path)? {
                roots
                    .add(cert)
                    .map_err(|e| format!("{}: not a usable CA certificate: {e}", path.display()))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("tls: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The rustls error inside an I/O error from a TLS handshake, if any.
pub fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}
