#include "store/s3_xml.h"

#include <charconv>
#include <pugixml.hpp>

namespace archil::store {
namespace {

bool Load(pugi::xml_document* doc, std::string_view body) {
  return doc->load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
}

std::string Text(const pugi::xml_node& node, const char* child) {
  return node.child(child).text().as_string();
}

}  // namespace

std::string UnquoteEtag(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

S3Error ParseS3Error(std::string_view body) {
  pugi::xml_document doc;
  if (!Load(&doc, body)) return {};
  pugi::xml_node err = doc.child("Error");
  if (!err) return {};
  return {Text(err, "Code"), Text(err, "Message")};
}

Result<ListResult> ParseListObjectsV2(std::string_view body) {
  pugi::xml_document doc;
  if (!Load(&doc, body)) return Status::Corruption("ListObjectsV2 reply is not XML");
  pugi::xml_node root = doc.child("ListBucketResult");
  if (!root) return Status::Corruption("ListObjectsV2 reply has no ListBucketResult");
  ListResult out;
  const std::string truncated = Text(root, "IsTruncated");
  if (truncated != "true" && truncated != "false") {
    return Status::Corruption("ListObjectsV2 reply has no valid IsTruncated");
  }
  out.truncated = truncated == "true";
  for (pugi::xml_node c = root.child("Contents"); c; c = c.next_sibling("Contents")) {
    ObjectInfo info;
    info.key = Text(c, "Key");
    const std::string size = Text(c, "Size");
    auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), info.size);
    if (info.key.empty() || ec != std::errc() || end != size.data() + size.size()) {
      return Status::Corruption("ListObjectsV2 reply has an entry without a key or size");
    }
    info.etag = UnquoteEtag(Text(c, "ETag"));
    out.objects.push_back(std::move(info));
  }
  return out;
}

Result<std::string> ParseInitiateMultipart(std::string_view body) {
  pugi::xml_document doc;
  if (!Load(&doc, body)) return Status::Corruption("CreateMultipartUpload reply is not XML");
  std::string id = Text(doc.child("InitiateMultipartUploadResult"), "UploadId");
  if (id.empty()) return Status::Corruption("CreateMultipartUpload reply has no UploadId");
  return id;
}

std::string CompleteMultipartBody(const std::vector<CompletedPart>& parts) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CompleteMultipartUpload");
  root.append_attribute("xmlns") = "http://s3.amazonaws.com/doc/2006-03-01/";
  for (const CompletedPart& p : parts) {
    pugi::xml_node part = root.append_child("Part");
    part.append_child("PartNumber").text() = p.number;
    part.append_child("ETag").text() = ("\"" + p.etag + "\"").c_str();
    if (!p.crc32c.empty()) part.append_child("ChecksumCRC32C").text() = p.crc32c.c_str();
  }
  struct Writer : pugi::xml_writer {
    std::string out;
    void write(const void* data, size_t size) override {
      out.append(static_cast<const char*>(data), size);
    }
  } writer;
  doc.save(writer, "", pugi::format_raw);
  return writer.out;
}

Result<std::string> ParseCompleteMultipart(std::string_view body) {
  pugi::xml_document doc;
  if (!Load(&doc, body)) return Status::Corruption("CompleteMultipartUpload reply is not XML");
  if (pugi::xml_node err = doc.child("Error")) {
    const std::string code = Text(err, "Code");
    const std::string what = "CompleteMultipartUpload: " + code + ": " + Text(err, "Message");
    if (code == "InternalError" || code == "SlowDown") return Status::Unavailable(what);
    return Status::Internal(what);
  }
  pugi::xml_node root = doc.child("CompleteMultipartUploadResult");
  if (!root) return Status::Corruption("CompleteMultipartUpload reply has no result");
  return UnquoteEtag(Text(root, "ETag"));
}

}  // namespace archil::store
