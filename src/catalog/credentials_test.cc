#include "catalog/credentials.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(CredentialsTest, IssueThenParseRoundTrips) {
  for (CredentialKind kind : {CredentialKind::kApiKey, CredentialKind::kDiskToken}) {
    Result<IssuedCredential> c = IssueCredential(kind);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->token.substr(0, 4), kind == CredentialKind::kApiKey ? "key-" : "adt_");
    EXPECT_EQ(c->suffix, c->token.substr(c->token.size() - 4));
    EXPECT_EQ(c->token.find(c->secret_hash), std::string::npos) << "hash must not be the secret";
    Result<ParsedCredential> p = ParseCredential(c->token);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->kind, kind);
    EXPECT_EQ(p->id, c->id);
    EXPECT_TRUE(SecretMatches(p->secret, c->secret_hash));
    EXPECT_FALSE(SecretMatches(p->secret + "0", c->secret_hash));
  }
}

TEST(CredentialsTest, TwoIssuesDiffer) {
  EXPECT_NE(IssueCredential(CredentialKind::kApiKey)->token,
            IssueCredential(CredentialKind::kApiKey)->token);
}

TEST(CredentialsTest, Sha256KnownAnswer) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_FALSE(SecretMatches("abc", "short"));
}

TEST(CredentialsTest, RejectsMalformed) {
  std::string good_rest = std::string(16, 'a') + "_" + std::string(48, 'b');
  for (const std::string& bad : {std::string(""), std::string("Bearer"), "key-" + good_rest + "c",
                                 "key-" + std::string(16, 'a') + "-" + std::string(48, 'b'),
                                 "key-" + std::string(16, 'A') + "_" + std::string(48, 'b'),
                                 "xyz_" + good_rest, std::string("key-\xff\xfe")}) {
    EXPECT_FALSE(ParseCredential(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseCredential("key-" + good_rest).ok());
}

TEST(CredentialsTest, AuthorizationHeaderForms) {
  std::string key = "key-" + std::string(16, 'a') + "_" + std::string(48, 'b');
  EXPECT_EQ(*CredentialFromAuthorization("Bearer " + key), key);
  for (const char* scheme : {"bearer ", "BEARER ", "BeArEr "}) {  // case-insensitive (RFC 9110)
    EXPECT_EQ(*CredentialFromAuthorization(scheme + key), key) << scheme;
  }
  EXPECT_EQ(CredentialFromAuthorization("Bearerx" + key).status().code(),
            Status::Code::kUnauthenticated);
  EXPECT_EQ(*CredentialFromAuthorization("key-" + key), key);  // SPEC: "key-<key>"
  EXPECT_EQ(*CredentialFromAuthorization(key), key);           // Archil: the key itself
  EXPECT_EQ(CredentialFromAuthorization("").status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(CredentialFromAuthorization("Basic dXNlcjpwYXNz").status().code(),
            Status::Code::kUnauthenticated);
  EXPECT_EQ(CredentialFromAuthorization("Bearer   ").status().code(),
            Status::Code::kUnauthenticated);
}

}  // namespace
}  // namespace archil
