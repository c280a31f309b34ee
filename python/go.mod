module spiral/python

go 1.26.0

require spiral v0.0.0-00010101000000-000000000000

require golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect

replace spiral => ..
