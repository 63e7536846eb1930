// A small streaming JSON writer for the --format json outputs (the app itself needs no JSON
// parser; the tests parse its output with nlohmann-json). Two-space indentation; non-finite
// numbers, which JSON cannot spell, become null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pagh_mm {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);  // the next value is this member's

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(std::uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  template <class T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // The document, ending with a newline. Throws std::logic_error if a container is still open.
  std::string str() const;

 private:
  void before_value();
  JsonWriter& close(char bracket);
  void newline();

  std::string out_;
  std::vector<bool> first_in_container_;  // one per open container
  bool after_key_ = false;
};

std::string json_escape(std::string_view text);

}  // namespace pagh_mm
