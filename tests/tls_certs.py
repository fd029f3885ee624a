"""Certificates made in the test with ``cryptography``: nothing is downloaded or checked in.

``self_signed``: one certificate for 127.0.0.1 that is its own CA.
``public_chain``: what a public CA hands out (Let's Encrypt's fullchain.pem):
a leaf for a host name, then the intermediate that signed it; the root is
left out, so only a client that trusts the file's own certificates accepts it.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

Key = ec.EllipticCurvePrivateKey


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _issue(
    subject: str, key: Key, issuer: str, issuer_key: Key, *, ca: bool, san: x509.GeneralName
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    usage = dict.fromkeys(
        ("content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
         "crl_sign", "encipher_only", "decipher_only"),
        False,
    )  # fmt: skip
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([san]), critical=False)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=ca, **usage), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
        .sign(issuer_key, hashes.SHA256())
    )


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def write_key(key: Key, path: Path, password: bytes | None = None) -> Path:
    """``key`` as a PKCS#8 PEM file, encrypted with ``password`` if one is given."""
    encryption: serialization.KeySerializationEncryption = serialization.NoEncryption()
    if password is not None:
        encryption = serialization.BestAvailableEncryption(password)
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    )
    return path


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that signs itself, and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    loopback = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    cert = _issue("halls test", key, "halls test", key, ca=True, san=loopback)
    certfile = directory / "cert.pem"
    certfile.write_bytes(_pem(cert))
    return certfile, write_key(key, directory / "key.pem")


def public_chain(directory: Path, host: str) -> tuple[Path, Path]:
    """A leaf for ``host`` followed by its intermediate (no root), and the leaf's key."""
    root = ec.generate_private_key(ec.SECP256R1())
    middle = ec.generate_private_key(ec.SECP256R1())
    leaf = ec.generate_private_key(ec.SECP256R1())
    anywhere = x509.DNSName("ca.example.com")
    inter = _issue("test intermediate", middle, "test root", root, ca=True, san=anywhere)
    cert = _issue(host, leaf, "test intermediate", middle, ca=False, san=x509.DNSName(host))
    fullchain = directory / "fullchain.pem"
    fullchain.write_bytes(_pem(cert) + _pem(inter))
    return fullchain, write_key(leaf, directory / "privkey.pem")
