; Yett's Windows installer, built on Linux by build/scripts/package.sh with
; Debian's makensis from the cross-built yett-desktop.exe and yett.exe:
;
;   makensis -WX -DVERSION=0.1.0 -DBIN=build/bin -DOUTFILE=out.exe build/windows/installer.nsi
;
; It installs both programs side by side (the app accepts only the yett.exe
; next to it as the MCP shim) for all users, adds a Start menu entry and an
; uninstaller. Neither touches the person's data (%AppData%\Yett: the vault,
; the audit log), which outlives an uninstall as a Linux package's does.

!ifndef VERSION
  !error "define VERSION (x.y.z)"
!endif
!ifndef BIN
  !error "define BIN, the absolute directory of the .exe files"
!endif
!ifndef OUTFILE
  !error "define OUTFILE"
!endif

Unicode true
SetCompressor /SOLID lzma
RequestExecutionLevel admin
ManifestDPIAware true

!include "LogicLib.nsh"
!include "x64.nsh"

!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Yett"
; WebView2, which the app's window needs, registers its version here (per
; machine, then per user).
!define WEBVIEW2_KEY "SOFTWARE\WOW6432Node\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"

Name "Yett"
OutFile "${OUTFILE}"
Icon "yett.ico"
UninstallIcon "yett.ico"
InstallDir "$PROGRAMFILES64\Yett"
InstallDirRegKey HKLM "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "Yett ${VERSION}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "Yett"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "Yett installer"
VIAddVersionKey "CompanyName" "The Yett authors"
VIAddVersionKey "LegalCopyright" "The Yett authors"

Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

Function .onInit
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP "Yett needs 64-bit Windows."
    Abort
  ${EndIf}
  SetRegView 64
FunctionEnd

Section "Yett"
  SetOutPath "$INSTDIR"
  File "${BIN}/yett-desktop.exe"
  File "${BIN}/yett.exe"
  File "yett.ico"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  SetShellVarContext all
  CreateShortcut "$SMPROGRAMS\Yett.lnk" "$INSTDIR\yett-desktop.exe" "" "$INSTDIR\yett.ico"

  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayName" "Yett"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "Publisher" "The Yett authors"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\yett.ico"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoRepair" 1

  ; The window is drawn by Microsoft Edge WebView2 (part of Windows 11 and
  ; of current Windows 10). The installer does not download it; it says so.
  ReadRegStr $0 HKLM "${WEBVIEW2_KEY}" "pv"
  ${If} $0 == ""
    ReadRegStr $0 HKCU "Software\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}" "pv"
  ${EndIf}
  ${If} $0 == ""
  ${OrIf} $0 == "0.0.0.0"
    MessageBox MB_ICONINFORMATION "Yett's window needs the Microsoft Edge WebView2 Runtime, which this computer does not have yet. Install it from Microsoft (search for $\"WebView2 Runtime$\"), then start Yett."
  ${EndIf}
SectionEnd

Section "Uninstall"
  SetRegView 64
  SetShellVarContext all
  Delete "$SMPROGRAMS\Yett.lnk"
  Delete "$INSTDIR\yett-desktop.exe"
  Delete "$INSTDIR\yett.exe"
  Delete "$INSTDIR\yett.ico"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKLM "${UNINSTALL_KEY}"
  ; %AppData%\Yett (the vault and the audit log) is the person's: left as it is.
SectionEnd
