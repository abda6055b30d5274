module livebuild/registry

go 1.25

require github.com/google/go-containerregistry v0.20.7
