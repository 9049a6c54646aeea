// LanguageCode, the client language a command's header names, one line
// each as in codes.go: codes_gen.go derives LanguageName and
// LanguageByName from these lines.

package codec

// LanguageCode bytes: JSON headers carry the name, binary ones the byte.
//
//gencodes:language
const (
	LanguageJava   byte = 0  // JAVA: responses claim it, so their bytes match the Java server's
	LanguageCPP    byte = 1  // CPP
	LanguageDotNet byte = 2  // DOTNET
	LanguagePython byte = 3  // PYTHON
	LanguageDelphi byte = 4  // DELPHI
	LanguageErlang byte = 5  // ERLANG
	LanguageRuby   byte = 6  // RUBY
	LanguageOther  byte = 7  // OTHER
	LanguageHTTP   byte = 8  // HTTP
	LanguageGo     byte = 9  // GO
	LanguagePHP    byte = 10 // PHP
	LanguageOMS    byte = 11 // OMS
	LanguageRust   byte = 12 // RUST
	LanguageNodeJS byte = 13 // NODE_JS: 5.x only
)

// LanguageUnknown stands for a name or byte Java would parse to a null
// LanguageCode. Java does not reject such a header, so neither do we.
const LanguageUnknown byte = 0xFF
