//! TLS for the consumer's `https://` entries: rustls with the ring
//! provider, Mozilla's roots compiled in (`webpki-roots`), and the roots of
//! an entry's `ca_file` added on top. The server's certificate is always
//! verified, its chain and its name: there is no switch that turns this
//! off, so an entry's headers (a token) only ever go to the server its URL
//! names.
//!
//! One client configuration serves every request of a provider, so the
//! connections after the first resume its TLS session instead of repeating
//! the full handshake.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{CertificateError, ClientConfig, RootCertStore};

/// The longest `ca_file` read: a bundle of every public root is about
/// 220 KiB, so this leaves room for a large corporate one.
const MAX_CA_FILE_BYTES: usize = 4 * 1024 * 1024;

/// Why an entry's TLS cannot be set up; an entry's `ca_file` is named (the
/// path is the user's own, not a secret), each `reason` is rustls's or the
/// read's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TlsSetupError {
    #[error("TLS cannot be set up: {0}")]
    Provider(String),
    #[error("its `ca_file` {} cannot be read: {reason}", .file.display())]
    Unreadable { file: PathBuf, reason: String },
    #[error("its `ca_file` {} is not a PEM file of certificates: {reason}", .file.display())]
    NotPem { file: PathBuf, reason: String },
    #[error("a certificate in its `ca_file` {} is not a usable root: {reason}", .file.display())]
    NotARoot { file: PathBuf, reason: String },
    #[error(
        "its `ca_file` {} holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)",
        .file.display()
    )]
    NoCertificate { file: PathBuf },
}

/// The configuration of an entry without a `ca_file`, built once.
static DEFAULT: LazyLock<Result<Arc<ClientConfig>, TlsSetupError>> =
    LazyLock::new(|| config(default_roots()).map(Arc::new));

/// Mozilla's roots, as `webpki-roots` compiles them in.
fn default_roots() -> RootCertStore {
    RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

/// A client configuration that trusts `roots`, on the ring provider, for
/// HTTP/1.1 (the only version our client speaks, said in ALPN).
fn config(roots: RootCertStore) -> Result<ClientConfig, TlsSetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // The provider is named rather than taken from the process default:
    // a host whose tree also enables another provider would otherwise make
    // rustls unable to choose.
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| TlsSetupError::Provider(err.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The client configuration of an entry: the built-in roots, and those of
/// `ca_file` when it names one. A file that cannot be read, holds no
/// certificate or a certificate that is no usable root fails the entry;
/// the message names the file (the path is the user's own, not a secret).
pub(crate) fn client_config(ca_file: Option<&Path>) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let Some(ca_file) = ca_file else {
        return DEFAULT.clone();
    };
    let file = || ca_file.to_path_buf();
    // Read as every user-named file is: a regular file, without blocking,
    // bounded.
    let pem = bcode_fs::read_bounded(ca_file, MAX_CA_FILE_BYTES).map_err(|err| {
        TlsSetupError::Unreadable {
            file: file(),
            reason: err.to_string(),
        }
    })?;
    let mut roots = default_roots();
    let mut added = 0_usize;
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate = certificate.map_err(|err| TlsSetupError::NotPem {
            file: file(),
            reason: err.to_string(),
        })?;
        roots
            .add(certificate)
            .map_err(|err| TlsSetupError::NotARoot {
                file: file(),
                reason: tls_reason(&err),
            })?;
        added += 1;
    }
    if added == 0 {
        return Err(TlsSetupError::NoCertificate { file: file() });
    }
    config(roots).map(Arc::new)
}

/// Why a TLS handshake failed, in words: the common refusals of the
/// server's certificate said plainly, the rest as rustls says them.
pub(crate) fn handshake_reason(err: &std::io::Error) -> String {
    match err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(err) => tls_reason(err),
        None => err.to_string(),
    }
}

fn tls_reason(err: &rustls::Error) -> String {
    let rustls::Error::InvalidCertificate(certificate) = err else {
        return err.to_string();
    };
    match certificate {
        CertificateError::UnknownIssuer => "the server's certificate is not trusted: \
             no root it chains to is known (unknown issuer; an entry's `ca_file` can add \
             the root of a private server)"
            .to_owned(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("the server's certificate is not valid for the URL's host ({certificate})")
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("the server's certificate has expired ({certificate})")
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            format!("the server's certificate is not valid yet ({certificate})")
        }
        CertificateError::Revoked => "the server's certificate is revoked".to_owned(),
        _ => format!("the server's certificate is refused ({certificate})"),
    }
}
