// Test helper for the report CLI test: report_fill_db DB (full | empty).
#include <iostream>
#include <string>

#include "report_test_db.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: report_fill_db DB (full | empty)\n";
    return 2;
  }
  try {
    std::string mode = argv[2];
    if (mode == "empty") {
      tessel::records::open_database(argv[1]);
      return 0;
    }
    if (mode != "full") {
      std::cerr << "report_fill_db: unknown mode " << mode << "\n";
      return 2;
    }
    std::cout << tessel::test::fill_report_db(argv[1]) << " records\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "report_fill_db: " << e.what() << "\n";
    return 1;
  }
}
