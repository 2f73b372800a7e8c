#!/usr/bin/env bash
# Generates the test clips into DIR (default .fixtures/) with ffmpeg from Debian, deterministically:
# single-threaded encoders and bit-exact flags, so the same ffmpeg build gives the same bytes.
# Every clip shows its frame number as a 10-bit binary code in the top 32 rows (bit b is the
# 32-pixel-wide block b from the left: white = 1), so a test can read which frame it holds.
# Re-running is cheap: a clip is made only when missing. Needs: ffmpeg, python3.
set -euo pipefail
DIR=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.fixtures"}
mkdir -p "$DIR"
cd "$DIR"
STAMP=v13
if [[ -f .stamp && $(cat .stamp) == "$STAMP" ]]; then exit 0; fi

FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
BX=(-fflags +bitexact -flags:v +bitexact)
# The counter source: frame n as a binary code in the top band, testsrc2 below it.
counter() { # size rate frames [pixel format of the source, so odd sizes are not rounded]
  echo "testsrc2=size=$1:rate=$2,format=${4:-yuv420p},geq=lum='if(lt(Y,32),if(mod(floor(N/pow(2,floor(X/32))),2),235,16),lum(X,Y))':cb='if(lt(Y,32),128,cb(X,Y))':cr='if(lt(Y,32),128,cr(X,Y))',trim=end_frame=$3"
}
X264=(-c:v libx264 -threads 1 -preset veryfast)

# H.264 MP4, B-frames, closed GOPs of 30: the MP4 muxer writes an edit list for the B-frame delay.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 96)" "${X264[@]}" -g 30 -bf 2 -x264-params open-gop=0 -pix_fmt yuv420p "${BX[@]}" counter.mp4
# Same picture in MPEG-TS with open GOPs (non-zero start time, leading B-frames across I-frames).
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 96)" "${X264[@]}" -g 24 -bf 3 -x264-params open-gop=1:scenecut=0 -pix_fmt yuv420p "${BX[@]}" counter_open.ts
# Open GOPs of 100 with 3 B-frames (x264's defaults otherwise, scene cuts on): seeking to the
# keyframe at frame 200 decodes leading pictures whose references lie in the GOP before it.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 230)" "${X264[@]}" -crf 36 -bf 3 -x264-params open-gop=1:keyint=100 -pix_fmt yuv420p "${BX[@]}" counter_open_long.ts
# A live channel for the timeshift tests: 30 s, open GOPs of 30 (one a second), 3 B-frames.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 900)" "${X264[@]}" -crf 36 -g 30 -bf 3 -x264-params open-gop=1:scenecut=0 -pix_fmt yuv420p "${BX[@]}" counter_live.ts
# An edit list that starts in the middle of a GOP: the first shown frame is not a keyframe.
"${FF[@]}" -ss 0.5 -i counter.mp4 -c copy "${BX[@]}" counter_editlist.mp4
# Variable frame rate in Matroska: frame n at t = n/30 s, plus 0.5 s after frame 40.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 80),setpts='(N/30+gte(N\,40)*0.5)/TB'" "${X264[@]}" -g 20 -bf 2 -fps_mode vfr -pix_fmt yuv420p "${BX[@]}" counter_vfr.mkv
# BT.709-tagged, limited range.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 30)" "${X264[@]}" -g 30 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 -color_range tv "${BX[@]}" bt709.mp4
# Full range (yuvj-style tags) BT.601.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 30)" "${X264[@]}" -g 30 -pix_fmt yuv420p -color_range pc -colorspace smpte170m "${BX[@]}" fullrange.mp4
# Rotation metadata (display matrix, 90 degrees) and a non-square sample aspect ratio.
# (This ffmpeg writes no rotation itself: the track header's matrix is patched below.)
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 30)" "${X264[@]}" -g 30 -pix_fmt yuv420p "${BX[@]}" rotated.mp4
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 30),setsar=4/3" "${X264[@]}" -g 30 -pix_fmt yuv420p "${BX[@]}" anamorphic.mp4
# Cropping: 318x238 is coded as 320x240 macroblocks with a crop window in the SPS.
"${FF[@]}" -f lavfi -i "$(counter 318x238 30 20)" "${X264[@]}" -g 10 -pix_fmt yuv420p "${BX[@]}" cropped.mp4
# Odd dimensions (4:4:4 so that H.264 allows them).
"${FF[@]}" -f lavfi -i "$(counter 321x241 30 20 yuv444p)" "${X264[@]}" -g 10 -pix_fmt yuv444p "${BX[@]}" odd.mkv
# HEVC 10-bit, VP9, AV1.
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 30)" -c:v libx265 -preset ultrafast -x265-params pools=1:frame-threads=1:log-level=error:keyint=15 -pix_fmt yuv420p10le "${BX[@]}" hevc10.mkv
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 30)" -c:v libvpx-vp9 -threads 1 -deadline realtime -cpu-used 8 -g 15 -pix_fmt yuv420p "${BX[@]}" vp9.webm
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 20)" -c:v libaom-av1 -threads 1 -cpu-used 8 -g 10 -pix_fmt yuv420p "${BX[@]}" av1.mkv
# A raw H.264 elementary stream (no container timestamps).
"${FF[@]}" -i counter.mp4 -c copy -bsf:v h264_mp4toannexb -frames:v 60 "${BX[@]}" counter.h264

# Bad inputs.
# Truncated: moov first (faststart) and the data cut at 60%; moov last and cut (no index at all).
"${FF[@]}" -i counter.mp4 -c copy -movflags +faststart "${BX[@]}" faststart.mp4
python3 - <<'PY'
import os, random
def cut(src, dst, frac):
    data = open(src, 'rb').read()
    open(dst, 'wb').write(data[:int(len(data) * frac)])
cut('faststart.mp4', 'truncated.mp4', 0.6)
cut('counter.mp4', 'truncated_noindex.mp4', 0.6)
# Corrupt bitstream: the MP4 container intact, bytes inside the coded pictures changed (every
# 97th byte of the middle third of the media data), so the decoder must conceal errors.
data = bytearray(open('counter.mp4', 'rb').read())
rng = random.Random(7)
start = data.find(b'mdat') + 4
end = data.find(b'moov') - 8
third = (end - start) // 3
for off in range(start + third, start + 2 * third, 97):
    data[off] = rng.randrange(256)
open('corrupt.mp4', 'wb').write(bytes(data))
# Display matrix of a 90-degree clockwise turn in the video track header (tkhd, version 0).
import struct
mp4 = bytearray(open('rotated.mp4', 'rb').read())
identity = struct.pack('>9i', 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
turn90 = struct.pack('>9i', 0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x40000000)
i = mp4.find(b'tkhd')
j = mp4.find(identity, i)
assert i >= 0 and j == i + 44, (i, j)
mp4[j:j + 36] = turn90
open('rotated.mp4', 'wb').write(bytes(mp4))
# Random bytes.
rng = random.Random(1)
open('random.bin', 'wb').write(bytes(rng.randrange(256) for _ in range(65536)))
# A Matroska file whose codec id no libavcodec knows (V_MPEG4/ISO/AVC renamed, same length).
mkv = bytearray(open('odd.mkv', 'rb').read())
i = mkv.find(b'V_MPEG4/ISO/AVC')
assert i >= 0
mkv[i:i + 15] = b'V_SCANOUT/NONE1'
open('unknown_codec.mkv', 'wb').write(bytes(mkv))
PY
# HLS ladders for adaptive playback: the counter at each size (the code band is drawn at every
# size, not scaled), 150 frames at 30 fps, keyframes every 30 frames and nowhere else (no scene
# cuts, closed GOPs), 1 s segments: every variant's segments start at the same frames.
hls_ladder() { # dir size:bitrate...
  local dir=$1; shift
  local inputs=() maps=() rates=() streams=() i=0
  for v in "$@"; do
    inputs+=(-f lavfi -i "$(counter "${v%%:*}" 30 150)")
    maps+=(-map "$i:v")
    rates+=("-b:v:$i" "${v##*:}" "-maxrate:v:$i" "${v##*:}" "-bufsize:v:$i" "${v##*:}")
    streams+=("v:$i")
    i=$((i + 1))
  done
  rm -rf "$dir" && mkdir -p "$dir"
  "${FF[@]}" "${inputs[@]}" "${maps[@]}" "${X264[@]}" "${rates[@]}" -g 30 -keyint_min 30 -bf 2 \
    -x264-params open-gop=0:scenecut=0 -pix_fmt yuv420p "${BX[@]}" -f hls -hls_time 1 -hls_playlist_type vod \
    -hls_segment_filename "$dir/v%v/seg%d.ts" -master_pl_name master.m3u8 -var_stream_map "${streams[*]}" "$dir/v%v/index.m3u8"
}
hls_ladder hls2 256x192:150k 320x240:600k
hls_ladder hls3 256x192:150k 288x216:300k 320x240:600k
# hls_subs: the hls2 ladder with alternative renditions in its master playlist: two WebVTT
# subtitle playlists (en, fr; the cues count from the first picture, whose MPEG-TS time the
# X-TIMESTAMP-MAP gives: 1.466667 s = 132000) and an AAC audio playlist.
hls_ladder hls_subs 256x192:150k 320x240:600k
mkdir -p hls_subs/subs hls_subs/audio
vtt() { # name cue...
  local f=hls_subs/subs/$1.vtt; shift
  printf 'WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:132000,LOCAL:00:00:00.000\n' > "$f"
  for c in "$@"; do printf '\n%s\n' "$c" >> "$f"; done
  printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:5\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:5.000000,\n%s\n#EXT-X-ENDLIST\n' \
    "$(basename "$f")" > "${f%.vtt}.m3u8"
}
vtt en $'00:00:00.500 --> 00:00:01.500\nFirst line' $'00:00:03.000 --> 00:00:04.000\nSecond line'
vtt fr $'00:00:01.000 --> 00:00:02.000\nPremière ligne' $'00:00:03.500 --> 00:00:04.500\nDeuxième ligne'
"${FF[@]}" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=5" -c:a aac -ac 2 "${BX[@]}" -f hls -hls_time 1 \
  -hls_playlist_type vod -hls_segment_filename hls_subs/audio/seg%d.ts hls_subs/audio/index.m3u8
python3 - <<'PY'
p = 'hls_subs/master.m3u8'
lines = open(p).read().split('\n')
media = ['#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,URI="audio/index.m3u8"',
         '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English",DEFAULT=NO,AUTOSELECT=YES,FORCED=NO,URI="subs/en.m3u8"',
         '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="fr",NAME="Français",DEFAULT=NO,AUTOSELECT=YES,FORCED=NO,URI="subs/fr.m3u8"']
out = lines[:2] + media + [l + ',AUDIO="aud",SUBTITLES="subs"' if l.startswith('#EXT-X-STREAM-INF') else l for l in lines[2:]]
open(p, 'w').write('\n'.join(out))
PY
# Audio only.
"${FF[@]}" -f lavfi -i "sine=frequency=440:duration=1" -c:a pcm_s16le "${BX[@]}" audio_only.wav
# Tracks: 3 s of counter video with two audio tracks (English AAC 440 Hz, default; German MP3
# 880 Hz) and two subtitle tracks (English SubRip; French ASS, forced), each tagged.
cat > tracks_en.srt <<'SRT'
1
00:00:00,500 --> 00:00:01,500
First line

2
00:00:02,000 --> 00:00:02,800
Second line
SRT
cat > tracks_fr.ass <<'ASS'
[Script Info]
ScriptType: v4.00+
PlayResX: 320
PlayResY: 240

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,DejaVu Sans,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Première ligne
ASS
"${FF[@]}" -f lavfi -i "$(counter 320x240 30 90)" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=3" \
  -f lavfi -i "sine=frequency=880:sample_rate=44100:duration=3" -i tracks_en.srt -i tracks_fr.ass \
  -map 0:v -map 1:a -map 2:a -map 3:s -map 4:s "${X264[@]}" -g 30 -pix_fmt yuv420p -c:a:0 aac -ac:a:0 2 -c:a:1 libmp3lame \
  -c:s:0 srt -c:s:1 ass -metadata:s:a:0 language=eng -metadata:s:a:1 language=ger -metadata:s:a:1 title="Deutsch" \
  -metadata:s:s:0 language=eng -metadata:s:s:1 language=fre -disposition:a:0 default -disposition:a:1 0 \
  -disposition:s:0 0 -disposition:s:1 forced "${BX[@]}" tracks.mkv
rm -f tracks_en.srt tracks_fr.ass
# A black picture, 3 s (a multiview tile's black-picture alarm): no counter band.
"${FF[@]}" -f lavfi -i "color=black:size=320x240:rate=30:duration=3" "${X264[@]}" -g 30 -pix_fmt yuv420p "${BX[@]}" black.mp4
echo "$STAMP" > .stamp
