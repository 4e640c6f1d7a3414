// For tests: a self-signed TLS certificate and key, written as PEM files, valid for the given
// names and addresses. The certificate is its own CA: a client trusts it by loading it as the
// CA file. Test-only (link OpenSSL::Crypto).
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <string>

namespace archil::net {

struct TestCert {
  std::string cert_file;
  std::string key_file;
};

// Writes <prefix>cert.pem and <prefix>key.pem. `san` is an OpenSSL subjectAltName value, e.g.
// "IP:127.0.0.1,DNS:localhost". Returns false if OpenSSL fails.
inline bool WriteTestCert(const std::string& prefix, const std::string& san, TestCert* out) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  bool ok = key != nullptr && x != nullptr;
  if (ok) {
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 2 * 86400);
    X509_set_pubkey(x, key);
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("archil test"), -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, san},
                                     std::pair{NID_basic_constraints, std::string("CA:TRUE")}}) {
      X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
      ok = ok && ext != nullptr && X509_add_ext(x, ext, -1) == 1;
      X509_EXTENSION_free(ext);
    }
    ok = ok && X509_sign(x, key, EVP_sha256()) > 0;
  }
  out->cert_file = prefix + "cert.pem";
  out->key_file = prefix + "key.pem";
  if (ok) {
    FILE* c = std::fopen(out->cert_file.c_str(), "w");
    FILE* k = std::fopen(out->key_file.c_str(), "w");
    ok = c != nullptr && k != nullptr && PEM_write_X509(c, x) == 1 &&
         PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    if (c) std::fclose(c);
    if (k) std::fclose(k);
  }
  X509_free(x);
  EVP_PKEY_free(key);
  return ok;
}

}  // namespace archil::net
